"""Searching a log without Textual: LogSearch and the argument of !logs."""

from __future__ import annotations

import pytest

from viewfinder.tui import TuiCommandError
from viewfinder.tui.commands import parse_logs_argument
from viewfinder.tui.log_search import LogSearch

LINES = ["GET / 200", "GET /api 500 Error: boom", "error in red", "warning: ERROR-ish", ""]


def test_any_case_by_default() -> None:
    search = LogSearch("error")
    assert search.select(LINES) == LINES[1:4]
    assert search.matches("an ERROR") and not search.matches("err or")
    assert str(search) == "/error"


def test_exact_case() -> None:
    search = LogSearch("Error", case_sensitive=True)
    assert search.select(LINES) == ["GET /api 500 Error: boom"]
    assert str(search) == "/Error (exact case)"


def test_a_plain_substring_not_a_pattern() -> None:
    assert LogSearch("GET /").select(LINES) == ["GET / 200", "GET /api 500 Error: boom"]
    assert LogSearch(".*").select(["a.*b", "ab"]) == ["a.*b"]


def test_typed_escape_sequences_are_made_safe() -> None:
    search = LogSearch("\x1b]0;title\x07boom\x07")
    assert search.text == "boom\u2407"
    with pytest.raises(ValueError, match="needs text"):
        LogSearch("")


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        ("web", ("web", None)),
        ("web /error", ("web", LogSearch("error"))),
        ("web /two words", ("web", LogSearch("two words"))),
        ("web --grep error", ("web", LogSearch("error"))),
        ("web --grep   'GET / '", ("web", LogSearch("GET / "))),
        ('web --grep "a b"', ("web", LogSearch("a b"))),
        ("web --case /Error", ("web", LogSearch("Error", case_sensitive=True))),
        ("web --case --grep Error", ("web", LogSearch("Error", case_sensitive=True))),
    ],
)
def test_parse_logs_argument(argument: str, expected: tuple[str, LogSearch | None]) -> None:
    assert parse_logs_argument(argument) == expected


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("web extra", "!logs takes ID, then /TEXT or --grep TEXT"),
        ("web --grepx error", "!logs takes ID, then /TEXT or --grep TEXT"),
        ("web /", "nothing to look for"),
        ("web --grep", "nothing to look for"),
        ("web --grep ''", "nothing to look for"),
        ("web --case", "--case goes with a search"),
    ],
)
def test_bad_logs_arguments(argument: str, message: str) -> None:
    with pytest.raises(TuiCommandError, match=message):
        parse_logs_argument(argument)
