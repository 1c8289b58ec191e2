"""The window a pointer is over, in the X server's stacking order.

An accessibility tree holds only the applications that expose one, and says nothing of
which window is in front: a Tk window over a GTK one leaves the GTK button under it in
the tree. :func:`window_at` asks the server which top-level window is on top at a
point and :func:`shows` whether it is an element's own: the recorder keeps an element
only then, and the ComputerTool clicks an element only then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from Xlib import X
from Xlib.error import XError

from viewfinder.core import Region
from viewfinder.core.element import Element, ElementTree

#: How deep below a top-level window its client (the window with the title) may be:
#: a window manager puts each client in a frame of its own, and some frame it twice.
_CLIENT_DEPTH = 2


@dataclass(frozen=True)
class TopWindow:
    """The front window at a point: its title and where its inside is on the screen."""

    title: str
    box: Region


def window_at(conn: Any, x: int, y: int) -> TopWindow | None:
    """The top-level window that shows at root point (``x``, ``y``), or None (bare root)."""
    root = conn.screen().root
    for window in reversed(root.query_tree().children):  # the top of the stack first
        try:
            attributes = window.get_attributes()
            if attributes.map_state != X.IsViewable or attributes.win_class == X.InputOnly:
                continue
            frame = window.get_geometry()
        except XError:  # gone meanwhile
            continue
        if not (frame.x <= x < frame.x + frame.width and frame.y <= y < frame.y + frame.height):
            continue
        client, title = _client(conn, window, _CLIENT_DEPTH) or (window, "")
        try:
            inside = client.get_geometry()
            origin = root.translate_coords(client, 0, 0)
        except XError:
            continue
        box = Region(x=origin.x, y=origin.y, width=inside.width, height=inside.height)
        return TopWindow(title, box)
    return None


def shows(front: TopWindow, tree: ElementTree, element: Element) -> bool:
    """Whether ``front`` is the window of ``element`` (of ``tree``): the title of the
    element's window (its first placed element: an application has no box) names it, or
    that element's box is ``front``'s inside."""
    placed = [above for above in (*tree.ancestors(element), element) if above.box]
    if not placed:
        return False
    window = placed[0]
    return bool(window.name and window.name == front.title) or window.box == front.box


def _client(conn: Any, window: Any, depth: int) -> tuple[Any, str] | None:
    """The window with a title at or below ``window`` (a client inside its frames)."""
    title = _title(conn, window)
    if title is not None:
        return window, title
    if depth <= 0:
        return None
    try:
        children = window.query_tree().children
    except XError:
        return None
    for child in reversed(children):
        found = _client(conn, child, depth - 1)
        if found is not None:
            return found
    return None


def _title(conn: Any, window: Any) -> str | None:
    try:
        prop = window.get_full_property(
            conn.intern_atom("_NET_WM_NAME"), conn.intern_atom("UTF8_STRING")
        )
        if prop is not None and prop.value:
            value = prop.value
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        name = window.get_wm_name()
    except XError:
        return None
    if name is None:
        return None
    return name.decode("latin-1") if isinstance(name, bytes) else str(name)
