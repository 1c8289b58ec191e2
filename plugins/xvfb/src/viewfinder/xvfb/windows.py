"""Windows on an X display: where one is on the screen, which exist, and closing them all."""

from __future__ import annotations

import time
from dataclasses import dataclass

import Xlib.display
import Xlib.error
from Xlib import X

from viewfinder.core.errors import WindowNotFoundError
from viewfinder.core.geometry import Region
from viewfinder.xvfb.errors import WindowNotViewableError

_MAP_STATES = {X.IsUnmapped: "unmapped", X.IsUnviewable: "unviewable", X.IsViewable: "viewable"}


@dataclass(frozen=True)
class WindowPlacement:
    """Where a window's inside is on the root window, and whether it is shown."""

    window: int
    x: int
    y: int
    width: int
    height: int
    map_state: str

    def region_on_screen(self, screen_width: int, screen_height: int) -> Region | None:
        """The visible part of the window clipped to the screen, or None when none is."""
        left, top = max(self.x, 0), max(self.y, 0)
        right = min(self.x + self.width, screen_width)
        bottom = min(self.y + self.height, screen_height)
        if right <= left or bottom <= top:
            return None
        return Region(x=left, y=top, width=right - left, height=bottom - top)


def not_found_message(window: int, display_name: str) -> str:
    return (
        f"no window with id {window} (0x{window:x}) on X display {display_name}; list the "
        f"windows with `DISPLAY={display_name} xwininfo -root -tree`"
    )


def placement(conn: Xlib.display.Display, window: int, display_name: str) -> WindowPlacement:
    """Locate window ``window`` on the root window; :class:`WindowNotFoundError` when none."""
    root = conn.screen().root
    resource = conn.create_resource_object("window", window)
    try:
        attributes = resource.get_attributes()
        geometry = resource.get_geometry()
        origin = root.translate_coords(resource, 0, 0)
    except (
        Xlib.error.BadWindow,
        Xlib.error.BadDrawable,
        Xlib.error.BadMatch,
        Xlib.error.BadValue,
    ) as exc:
        raise WindowNotFoundError(not_found_message(window, display_name)) from exc
    return WindowPlacement(
        window=window,
        x=origin.x,
        y=origin.y,
        width=geometry.width,
        height=geometry.height,
        map_state=_MAP_STATES.get(attributes.map_state, str(attributes.map_state)),
    )


def visible_region(conn: Xlib.display.Display, window: int, display_name: str) -> Region:
    """The on-screen region of a shown window, clipped to the screen.

    :class:`WindowNotFoundError` for an id that names no window,
    :class:`~viewfinder.xvfb.errors.WindowNotViewableError` for one that is not mapped
    or lies wholly off the screen.
    """
    place = placement(conn, window, display_name)
    if place.map_state != "viewable":
        raise WindowNotViewableError(
            f"window {window} (0x{window:x}) on {display_name} is {place.map_state}: it "
            "shows nothing to capture. Map (show) it first, or wait until it is mapped."
        )
    screen = conn.screen()
    region = place.region_on_screen(screen.width_in_pixels, screen.height_in_pixels)
    if region is None:
        raise WindowNotViewableError(
            f"window {window} (0x{window:x}) on {display_name} at {place.x},{place.y} "
            f"({place.width}x{place.height}) lies wholly outside the "
            f"{screen.width_in_pixels}x{screen.height_in_pixels} screen"
        )
    return region


def top_level_windows(conn: Xlib.display.Display) -> list[int]:
    """Ids of the root window's children (each belongs to some client)."""
    return [child.id for child in conn.screen().root.query_tree().children]


def close_all_clients(conn: Xlib.display.Display, timeout: float = 5.0) -> list[int]:
    """Kill every client that owns a top-level window; return the windows that remain.

    ``XKillClient`` on a window id closes the connection of the client that created it,
    which destroys all its windows. An empty list means the display is clean.
    """
    deadline = time.monotonic() + timeout
    remaining = top_level_windows(conn)
    while remaining:
        for window in remaining:
            # The window may vanish between the query and the kill (its client quit):
            # catch that BadValue instead of letting python-xlib print it.
            conn.create_resource_object("window", window).kill_client(
                onerror=Xlib.error.CatchError()
            )
        # A reply round trip: every KillClient above has been carried out after it.
        remaining = top_level_windows(conn)
        if not remaining or time.monotonic() >= deadline:
            break
    return remaining
