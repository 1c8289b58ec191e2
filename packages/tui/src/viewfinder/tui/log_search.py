"""Search in a process's log: ``!logs ID /TEXT`` shows only the lines with TEXT.

A plain substring, any case unless asked otherwise (``--case``). It looks at the lines
as the log shows them, after :func:`~viewfinder.tui.output.terminal_safe`: what you
search is what you see, and no escape sequence of a process reaches the terminal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from viewfinder.tui.output import terminal_safe


@dataclass(frozen=True)
class LogSearch:
    """Lines that contain ``text``; in any case unless ``case_sensitive``."""

    text: str
    case_sensitive: bool = False
    _needle: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.text:
            raise ValueError("a log search needs text to look for")
        # Typed or pasted text is shown in the title and the console: make it as safe
        # as the lines it is compared with.
        object.__setattr__(self, "text", terminal_safe(self.text))
        needle = self.text if self.case_sensitive else self.text.casefold()
        object.__setattr__(self, "_needle", needle)

    def matches(self, line: str) -> bool:
        """Whether ``line`` contains the text."""
        return self._needle in (line if self.case_sensitive else line.casefold())

    def select(self, lines: Iterable[str]) -> list[str]:
        """The lines that match, in order."""
        needle = self._needle
        if self.case_sensitive:
            return [line for line in lines if needle in line]
        return [line for line in lines if needle in line.casefold()]

    def __str__(self) -> str:
        return f"/{self.text}" + (" (exact case)" if self.case_sensitive else "")
