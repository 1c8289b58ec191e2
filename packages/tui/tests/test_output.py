"""Splitting bytes into lines and the bounded per-process buffer."""

from __future__ import annotations

import pytest

from viewfinder.tui.output import MAX_LINE_BYTES, LineSplitter, OutputBuffer, OutputLine


def test_lines_split_across_chunks() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"one\ntw") == ["one"]
    assert splitter.feed(b"o\nthree") == ["two"]
    assert splitter.feed(b"\n") == ["three"]
    assert splitter.flush() == []


def test_crlf_utf8_split_mid_character_and_bad_bytes() -> None:
    splitter = LineSplitter()
    snowman = "☃".encode()
    assert splitter.feed(b"dos\r\nsnow " + snowman[:1]) == ["dos"]
    assert splitter.feed(snowman[1:] + b"\n\xff\n") == ["snow ☃", "\ufffd"]


def test_unterminated_last_line_comes_out_on_flush() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"no newline") == []
    assert splitter.flush() == ["no newline"]


def test_an_endless_line_is_cut() -> None:
    splitter = LineSplitter()
    lines = splitter.feed(b"x" * MAX_LINE_BYTES)
    assert lines == ["x" * MAX_LINE_BYTES]
    assert splitter.flush() == []


def test_buffer_keeps_the_last_lines_and_counts_the_rest() -> None:
    buffer = OutputBuffer(3)
    buffer.extend("stdout", ["a", "b"])
    buffer.extend("stderr", ["c", "d", "e"])
    assert buffer.tail() == [
        OutputLine("stderr", "c"),
        OutputLine("stderr", "d"),
        OutputLine("stderr", "e"),
    ]
    assert buffer.tail(1) == [OutputLine("stderr", "e")] and buffer.tail(0) == []
    assert (buffer.total, buffer.dropped, len(buffer)) == (5, 2, 3)
    assert buffer.last() == OutputLine("stderr", "e")


def test_buffer_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        OutputBuffer(0)
