"""The bounded buffer of a process's output lines, and splitting bytes into lines.

Everything a process writes is shown as text, never passed to the user's terminal as
commands: :func:`terminal_safe` drops every escape sequence (OSC titles, OSC 52
clipboard writes, OSC 8 links, CSI cursor moves, erases and screen switches, DCS, their
8-bit C1 forms, colours too) and shows any other control character as a visible symbol
(``␛``, ``␇``, ``\x9b``). The log widget shows plain text, so colours go as well.
"""

from __future__ import annotations

import re
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


# Whole escape sequences (ECMA-48), 7-bit and 8-bit; an unterminated string sequence
# runs to the end of the text it is in.
_SEQUENCE = re.compile(
    r"\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC ... BEL or ST
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC ... ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[ -/]*[0-~]"  # any other ESC sequence (character sets, keypad modes, RIS)
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|\x9d[^\x07\x9c]*(?:\x07|\x9c)?"  # 8-bit OSC
    r"|[\x90\x98\x9e\x9f][^\x9c]*\x9c?"  # 8-bit DCS, SOS, PM, APC
)
# Control characters left after that, but for tab, newline and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ ␇ ␛ ...
    return "\u2421" if code == 0x7F else f"\\x{code:02x}"


def terminal_safe(text: str) -> str:
    """``text`` with no escape sequence and no control character a terminal would act on.

    Sequences are dropped whole; other control characters (a bare ESC, BEL, C1 codes)
    become visible symbols. Tab, newline and carriage return are kept.
    """
    if _CONTROL.search(text) is None:
        return text  # the common case, checked in C
    return _CONTROL.sub(_visible, _SEQUENCE.sub("", text))


def _decode(data: bytes) -> str:
    return terminal_safe(data.decode("utf-8", "replace"))


def _split(text: str) -> list[str]:
    lines = text.split("\n")
    if "\r" in text:
        # a carriage return starts the line over, as a terminal shows it (progress bars)
        lines = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines]
    return lines
