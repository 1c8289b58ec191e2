"""Whose change is it? A drawn rectangle counts for an action only where the action acted.

A screen has more than the app an action went to: a clock ticks, a banner cycles its
colours, another app animates. Their repaints are no effect of the action, and a wait
that took them for one would last as long as they go on (and teach the session a hold
it does not need). :class:`ActionWindows` keeps, on the change watch's X connection,
the top-level windows in their stacking order and which of them are the action's:

- the window the action went to (the top-level under the pointer for a pointer action,
  the one holding the keyboard focus for keys), set by :meth:`~ActionWindows.aim` right
  after the action;
- every top-level mapped after that by the same app (a menu, a dialog): the same
  process (the X-Resource extension's client pid), else the same X client;
- whatever is drawn over the point where the pointer acted.

A rectangle lying in another window that is stacked above every action window it
touches is someone else's; anything else (the bare root, unknown windows, no target)
counts as the action's, so attribution can only shorten a wait that others' drawing
would have stretched.
"""

from __future__ import annotations

import contextlib
from typing import Any

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (x1, y1 exclusive), screen coordinates


class ActionWindows:
    """The action's top-level windows on the X connection ``conn`` (see the module
    docstring). Structure events of the root's children come on ``conn``: hand each to
    :meth:`structure`."""

    def __init__(self, conn: Any) -> None:
        from Xlib import X
        from Xlib.ext import res

        self._conn = conn
        self._root = conn.screen().root
        self._X = X
        self._pid_mask = res.LocalClientPIDMask
        self._res = conn.has_extension(res.extname)
        self._id_mask = int(conn.display.info.resource_id_mask)
        # Map, unmap, configure and restack of top-levels arrive as events on conn.
        self._root.change_attributes(event_mask=X.SubstructureNotifyMask)
        self._tops: list[tuple[int, Box]] | None = None  # viewable top-levels, bottom first
        #: The action's top-level windows; None: attribution is off, everything counts.
        self.target: set[int] | None = None
        self._owner: tuple[str, int] | None = None
        self._point: tuple[int, int] | None = None

    def aim(self, pointer: bool | None) -> None:
        """The action just done went to the window under the pointer (``pointer``) or
        to the focused one; None: no window (a wait), attribution off until the next."""
        self.target, self._owner, self._point = None, None, None
        if pointer is None:
            return
        with contextlib.suppress(Exception):  # a window gone meanwhile: everything counts
            if pointer:
                where = self._root.query_pointer()
                self._point = (int(where.root_x), int(where.root_y))
                window = int(getattr(where.child, "id", 0) or 0)
            else:
                window = self._top_of(self._conn.get_input_focus().focus)
            if window and window != self._root.id:
                self.target = {window}
                self._owner = self._owner_of(window)

    def structure(self, event: Any) -> None:
        """A top-level was mapped, unmapped, moved or restacked: a new window mapped by
        the action's app is the action's too."""
        self._tops = None
        if event.type == self._X.MapNotify and self.target is not None:
            window = int(event.window.id)
            if self._owner is not None and self._owner_of(window) == self._owner:
                self.target.add(window)

    def is_structure(self, event: Any) -> bool:
        X = self._X
        return event.type in (
            X.MapNotify,
            X.UnmapNotify,
            X.ConfigureNotify,
            X.DestroyNotify,
            X.CirculateNotify,
            X.ReparentNotify,
        )

    def ours(self, box: Box) -> bool:
        """Whether a rectangle drawn at ``box`` counts for the action."""
        target = self.target
        if target is None:
            return True
        if self._point is not None and _inside(self._point, box):
            return True
        tops = self._tops if self._tops is not None else self._stacking()
        for window, area in reversed(tops):  # topmost first
            if not _overlap(area, box):
                continue
            if window in target:
                return True
            if _contains(area, box):
                return False  # wholly in another window, above every action window here
        return True  # (partly) on the bare root: nobody's to tell, so the action's

    def _stacking(self) -> list[tuple[int, Box]]:
        tops: list[tuple[int, Box]] = []
        try:
            children = self._root.query_tree().children
        except Exception:
            children = []
        for child in children:
            try:
                if child.get_attributes().map_state != self._X.IsViewable:
                    continue
                geometry = child.get_geometry()
            except Exception:  # gone meanwhile
                continue
            border = 2 * geometry.border_width
            x, y = int(geometry.x), int(geometry.y)
            tops.append(
                (int(child.id), (x, y, x + geometry.width + border, y + geometry.height + border))
            )
        self._tops = tops
        return tops

    def _top_of(self, window: Any) -> int:
        """The root's child that holds ``window`` (0: none, the root or PointerRoot)."""
        if not hasattr(window, "query_tree"):
            return 0
        for _ in range(32):  # a window tree is shallow; bounded all the same
            parent = window.query_tree().parent
            if not parent or int(parent.id) == self._root.id:
                return int(window.id) if int(window.id) != self._root.id else 0
            window = parent
        return 0

    def _owner_of(self, window: int) -> tuple[str, int] | None:
        """The process (X-Resource's client pid) that made ``window``, else its X client."""
        if self._res:
            with contextlib.suppress(Exception):
                reply = self._conn.res_query_client_ids(
                    [{"client": window, "mask": self._pid_mask}]
                )
                for found in reply.ids:
                    if found.value:
                        return ("pid", int(found.value[0]))
        return ("client", window & ~self._id_mask)


def describe_elsewhere(repaints: int) -> str:
    """The words of a result whose wait saw other windows change."""
    return (
        f"other windows changed meanwhile ({repaints} repaints elsewhere, not this "
        "action's doing: not waited for)"
    )


def _inside(point: tuple[int, int], box: Box) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _contains(outer: Box, inner: Box) -> bool:
    return (
        outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and inner[2] <= outer[2]
        and inner[3] <= outer[3]
    )
