"""neutralised(): every control and bidirectional character shown, every text bounded."""

from __future__ import annotations

import pytest

from viewfinder.core.plain_text import neutralised


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Save", "Save"),
        ("a\x1b[31mb", "a␛[31mb"),
        ("bell\x07", "bell␇"),
        ("two\nlines\ttab\r", "two␊lines␉tab␍"),
        ("del\x7f", "del\u2421"),
        ("c1\x9b", "c1\\u009b"),
        ("report\u202egnp.exe", "report\\u202egnp.exe"),
        ("\u2066isolate\u2069", "\\u2066isolate\\u2069"),
        ("mark\u200f", "mark\\u200f"),
        ("Grüße 日本", "Grüße 日本"),
    ],
)
def test_controls_and_bidi_are_shown(text: str, shown: str) -> None:
    assert neutralised(text, 100) == shown


def test_long_texts_are_cut_with_an_ellipsis() -> None:
    assert neutralised("x" * 50, 10) == "x" * 9 + "\u2026"
    assert neutralised("x" * 10, 10) == "x" * 10
    # stand-ins count too: the result never passes the limit
    cut = neutralised("\u202e" * 8, 10)
    assert len(cut) == 10 and cut.endswith("\u2026")
