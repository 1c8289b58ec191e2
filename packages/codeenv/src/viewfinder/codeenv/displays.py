"""Where a code environment gets its display: a shared warm pool, or one of its own."""

from __future__ import annotations

from typing import Protocol

from viewfinder.xvfb import Display


class DisplaySource(Protocol):
    """Hands out running displays and takes them back (a ``DisplayPool`` is one)."""

    def acquire(self, timeout: float | None = None) -> Display:
        """A running, empty display."""
        ...

    def release(self, display: Display) -> None:
        """Take ``display`` back; the source cleans, reuses or stops it."""
        ...


class FreshDisplays:
    """A new Xvfb for every :meth:`acquire`, stopped on :meth:`release` (the cold path)."""

    def __init__(
        self, width: int = 1280, height: int = 800, *, die_with_owner: bool = False
    ) -> None:
        self.width, self.height = width, height
        #: X servers killed when the thread that acquires them ends (see Display)
        self.die_with_owner = die_with_owner

    def acquire(self, timeout: float | None = None) -> Display:
        return Display(
            self.width,
            self.height,
            start_timeout=timeout or 20.0,
            die_with_owner=self.die_with_owner,
        ).start()

    def release(self, display: Display) -> None:
        display.stop()
