"""The bounded buffer of a process's output lines, and splitting bytes into lines."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import repeat
from typing import NamedTuple

from viewfinder.tui.events import Stream

#: A line longer than this without a newline is cut into pieces, so one endless line
#: cannot grow memory without bound.
MAX_LINE_BYTES = 64 * 1024


class OutputLine(NamedTuple):
    """One line a process wrote, and on which stream."""

    stream: Stream
    text: str


class OutputBuffer:
    """The last ``max_lines`` lines of a process; older ones are dropped and counted."""

    def __init__(self, max_lines: int) -> None:
        if max_lines < 1:
            raise ValueError(f"max_lines must be at least 1, not {max_lines}")
        self.max_lines = max_lines
        self._lines: deque[OutputLine] = deque(maxlen=max_lines)
        self.total = 0

    def extend(self, stream: Stream, lines: Sequence[str]) -> None:
        """Append ``lines`` written on ``stream``."""
        # zip/map keep the per-line work in C; this runs for every batch a flood produces.
        self._lines.extend(map(OutputLine._make, zip(repeat(stream), lines)))
        self.total += len(lines)

    @property
    def dropped(self) -> int:
        """How many lines fell out of the buffer."""
        return self.total - len(self._lines)

    def tail(self, limit: int | None = None) -> list[OutputLine]:
        """The last ``limit`` lines (all kept lines by default), oldest first."""
        if limit is None or limit >= len(self._lines):
            return list(self._lines)
        if limit <= 0:
            return []
        return list(self._lines)[-limit:]

    def last(self) -> OutputLine | None:
        return self._lines[-1] if self._lines else None

    def __len__(self) -> int:
        return len(self._lines)


class LineSplitter:
    """Turns chunks of bytes into complete text lines, keeping a partial last line."""

    def __init__(self) -> None:
        self._partial = b""

    def feed(self, chunk: bytes) -> list[str]:
        data = self._partial + chunk if self._partial else chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) >= MAX_LINE_BYTES:
                self._partial = b""
                return [_decode(data)]
            self._partial = data
            return []
        self._partial = data[cut + 1 :]
        return _split(_decode(data[:cut]))

    def flush(self) -> list[str]:
        """The unterminated last line, if any (at end of stream)."""
        rest, self._partial = self._partial, b""
        return _split(_decode(rest)) if rest else []


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _split(text: str) -> list[str]:
    lines = text.split("\n")
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines
