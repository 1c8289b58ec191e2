"""Where a desktop's display comes from, and where it goes when the desktop closes.

A :class:`DisplayLease` is a desktop's hold on one X display: one it started (stopped
on release), one borrowed from a pool (given back), or one someone else runs (left
alone). :func:`parse_size` reads the screen sizes users write.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Protocol

from viewfinder.core.errors import DisplayGoneError
from viewfinder.desktop.apps import DesktopConfigError
from viewfinder.xvfb.connection import close_quietly, open_display
from viewfinder.xvfb.display import Display

log = logging.getLogger(__name__)

#: The screen size of a desktop that starts its own display, by default.
DEFAULT_SIZE = (1280, 800)
#: Largest side of a screen: X coordinates are signed 16-bit numbers.
MAX_SIDE = 32767


class DisplaySource(Protocol):
    """Where a desktop can borrow a display: a :class:`~viewfinder.xvfb.DisplayPool`, or
    anything with the same ``acquire`` / ``release``."""

    def acquire(self, timeout: float | None = None) -> Display: ...

    def release(self, display: Display) -> None: ...


def parse_size(size: tuple[int, int] | Sequence[int] | str) -> tuple[int, int]:
    """``(1280, 800)`` or ``"1280x800"`` -> ``(1280, 800)``; :class:`DesktopConfigError`
    for anything else, or a side outside 1..32767."""
    if isinstance(size, str):
        match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", size)
        if match is None:
            raise DesktopConfigError(f"screen size {size!r} is not WIDTHxHEIGHT (e.g. 1280x800)")
        width, height = int(match.group(1)), int(match.group(2))
    else:
        try:
            width, height = size
        except (TypeError, ValueError):
            raise DesktopConfigError(
                f"screen size {size!r} is not a (width, height) pair, e.g. (1280, 800)"
            ) from None
        if not all(
            isinstance(side, int) and not isinstance(side, bool) for side in (width, height)
        ):
            raise DesktopConfigError(f"screen size {size!r}: width and height must be integers")
    for name, side in (("width", width), ("height", height)):
        if not 1 <= side <= MAX_SIDE:
            raise DesktopConfigError(
                f"screen size {width}x{height}: {name} must be between 1 and {MAX_SIDE} pixels"
            )
    return width, height


def check_display_name(name: str) -> str:
    """``name`` when it names a local display (``:N`` or ``:N.S``); DesktopConfigError if not."""
    if re.fullmatch(r":\d+(\.\d+)?", name.strip()) is None:
        raise DesktopConfigError(f"{name!r} is not a local display name; write it as :N (e.g. :99)")
    return name.strip()


class DisplayLease:
    """A desktop's hold on one display: started, borrowed from ``pool``, or ``given``.

    :meth:`open` gets it (starting Xvfb of ``size``, acquiring from the pool, or checking
    that the given display answers); :meth:`release` stops it, gives it back, or leaves
    it alone, in the same three cases.
    """

    def __init__(
        self,
        given: Display | str | None = None,
        *,
        pool: DisplaySource | None = None,
        size: tuple[int, int] | None = None,
    ) -> None:
        self.given = given
        self.pool = pool
        self.wanted_size = size
        #: the Display object (None for a display given by name, or before open())
        self.display: Display | None = None
        self.name: str | None = None
        self.size: tuple[int, int] | None = None
        self._owned = self._borrowed = False

    def open(self) -> None:
        """Get the display: start it, borrow it or check it; then :attr:`name` and
        :attr:`size` are known."""
        given = self.given
        if self.pool is not None:
            self.display = self.pool.acquire()
            self._borrowed = True
        elif isinstance(given, Display):
            if not given.is_alive():
                raise DisplayGoneError(f"{given!r} is not running; start() it first")
            self.display = given
        elif isinstance(given, str):
            self.name, self.size = given, screen_size_of(given)  # fails unless it answers
            return
        else:
            width, height = self.wanted_size or DEFAULT_SIZE
            self.display = Display(width, height).start()
            self._owned = True
        self.name, self.size = self.display.name, self.display.size

    def release(self) -> None:
        """Stop the display if it was started here, give it back if borrowed; idempotent."""
        display, self.display = self.display, None
        try:
            if display is not None and self._owned:
                display.stop()
            elif display is not None and self._borrowed and self.pool is not None:
                self.pool.release(display)
        finally:
            self._owned = self._borrowed = False
            self.name = self.size = None


def screen_size_of(name: str) -> tuple[int, int]:
    """The screen size of X display ``name``; DisplayGoneError when it does not answer."""
    conn = open_display(name)
    try:
        screen = conn.screen()
        return screen.width_in_pixels, screen.height_in_pixels
    finally:
        close_quietly(conn)
