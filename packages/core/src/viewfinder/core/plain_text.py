"""Text from a session made safe to hand to a model or a terminal.

Names, roles and values an application exposes are written by code nobody reviewed:
an ESC starts a terminal escape sequence, a newline forges a line of a snapshot, a
right-to-left override (U+202E) makes ``report\u202egnp.exe`` read as "reportexe.png".
:func:`neutralised` shows every such character as a visible stand-in and bounds the
length, so what a model or a person reads is what the app said, and no more of it
than a line can hold.
"""

from __future__ import annotations

import re

#: C0 and C1 controls (newline and tab too: a name is one line), the bidirectional
#: embeddings, overrides and isolates, and the invisible direction marks.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: Appended to a cut text.
ELLIPSIS = "\u2026"


def _stand_in(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ ␊ ␛ ...
    if code == 0x7F:
        return "\u2421"
    return f"\\u{code:04x}"


def neutralised(text: str, limit: int) -> str:
    """``text`` with every control, bidirectional and direction-mark character shown
    as a visible stand-in (``␛``, ``\\u202e``), cut to ``limit`` characters (ending in
    an ellipsis when cut)."""
    if len(text) > limit:
        text = text[: max(limit - 1, 0)] + ELLIPSIS
    if _UNSAFE.search(text) is None:
        return text  # the common case, checked in C
    cleaned = _UNSAFE.sub(_stand_in, text)
    return cleaned if len(cleaned) <= limit else cleaned[: max(limit - 1, 0)] + ELLIPSIS
