"""The ``atspi`` element source: the accessibility trees of the apps on an X display.

The display's accessibility bus is found where AT-SPI clients look for it, the
``AT_SPI_BUS`` property of the root window (a :class:`~viewfinder.xvfb.Display` started
with ``accessibility=True`` sets it). Apps that expose no tree (Tk draws its widgets
itself and implements no AT-SPI) are named in the read's ``reason``: the tree is empty
or partial, never an error.
"""

from __future__ import annotations

import os
from typing import Any

import Xlib.display
import Xlib.error
from Xlib import X

from viewfinder.core.backend import Availability
from viewfinder.core.element_sources import (
    ElementNode,
    ElementRead,
    ElementSource,
    ElementSourceError,
)
from viewfinder.xvfb.accessibility_bus import ROOT_PROPERTY
from viewfinder.xvfb.connection import close_quietly, open_display
from viewfinder.xvfb.windows import top_level_windows

NO_BUS_REASON = (
    "display {display} has no accessibility bus (no AT_SPI_BUS on its root window): start "
    "it with Display(accessibility=True) or display.start_accessibility(), then start the "
    "apps with display.env()"
)
NO_TREE_REASON = (
    "{windows} expose no accessibility tree (Tk implements no AT-SPI; other toolkits may "
    "have been started without the bus's environment: see docs/elements.md)"
)


class AtspiSource(ElementSource):
    """The AT-SPI2 trees of the apps on X display ``display`` (default ``$DISPLAY``).

    ``timeout`` bounds one read (seconds); ``max_elements`` caps how many elements it
    collects (a browser's tree can hold tens of thousands).
    """

    name = "atspi"
    priority = 10

    def __init__(
        self, display: str | None = None, timeout: float = 5.0, max_elements: int = 5000
    ) -> None:
        super().__init__()
        chosen = display or os.environ.get("DISPLAY")
        if not chosen:
            raise ElementSourceError("no X display: pass display=':N' or set DISPLAY")
        if not timeout > 0:
            raise ElementSourceError(f"timeout must be more than 0 seconds, got {timeout}")
        if max_elements < 1:
            raise ElementSourceError(f"max_elements must be 1 or more, got {max_elements}")
        self.display = chosen
        self.timeout = timeout
        self.max_elements = max_elements

    @classmethod
    def availability(cls, display: str | None = None, **_: Any) -> Availability:
        if not (display or os.environ.get("DISPLAY")):
            return Availability.no("no X display: pass display=':N' or set DISPLAY")
        return Availability.yes()

    def _read(self) -> ElementRead:
        from viewfinder.xvfb.atspi import AtspiReader, ReadLimits

        conn = open_display(self.display)
        try:
            address = _bus_address(conn)
            screen = conn.screen()
            size = (screen.width_in_pixels, screen.height_in_pixels)
            windows = _titled_windows(conn)
        finally:
            close_quietly(conn)
        if address is None:
            return ElementRead([], NO_BUS_REASON.format(display=self.display))
        limits = ReadLimits(max_elements=self.max_elements, timeout=self.timeout)
        reader = AtspiReader(address, size, limits)
        try:
            roots = reader.read(reader.applications())
        finally:
            reader.close()
        return ElementRead(roots, _unexposed(windows, roots))


def _bus_address(conn: Xlib.display.Display) -> str | None:
    atom = conn.intern_atom(ROOT_PROPERTY, only_if_exists=True)
    if not atom:
        return None
    prop = conn.screen().root.get_full_property(atom, X.AnyPropertyType)
    if prop is None or not prop.value:
        return None
    value = prop.value
    return (value.decode() if isinstance(value, bytes) else str(value)).strip("\0") or None


def _titled_windows(conn: Xlib.display.Display) -> dict[str, str]:
    """The mapped top-level windows' titles, with each one's WM_CLASS class."""
    titled = {}
    for window_id in top_level_windows(conn):
        window = conn.create_resource_object("window", window_id)
        try:
            if window.get_attributes().map_state != X.IsViewable:
                continue
            title = window.get_wm_name()
            wm_class = window.get_wm_class()
        except Xlib.error.XError:  # gone meanwhile
            continue
        if title:
            titled[str(title)] = wm_class[1] if wm_class else "?"
    return titled


def _unexposed(windows: dict[str, str], roots: list[ElementNode]) -> str:
    """A reason naming the windows no application's tree has a top-level element for."""
    exposed = {child.name for app in roots for child in app.children}
    missing = [
        f"{title!r} ({wm_class})" for title, wm_class in windows.items() if title not in exposed
    ]
    if not missing:
        return ""
    return NO_TREE_REASON.format(windows="window " + ", ".join(missing))
