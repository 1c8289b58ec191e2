"""Where a replayed step may act: the live accessibility tree and X server of its display.

One :class:`LiveTargets` per replay reads the tree healing searches and answers the one
check before each step that recorded its element (``visual_element``) acts, healed or
not: the window in front at the point belongs to the recorded application and the
element under the point has the recorded role, name and path
(:func:`viewfinder.xvfb.top_window.anchor_refusal`). A relabelled button in the same
place passes the picture check (its hash is within the threshold) and is refused here;
so is a healed point that another application's window covers.

A step recorded with the application in front at its point (``visual_window``, the
window's ``WM_CLASS``; no tree needed, so a Tk app's steps have it too) acts only when
that application's window is in front there again: a look-alike of another program
lying where the recorded window was is refused, however alike its pixels.

Where the display has no tree for the recorded application (it exposes none now, or
the replay runs on a page), the element check cannot tell: the step goes by its
picture (and its window) alone.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from viewfinder.cache.heal import names_a_target
from viewfinder.cache.models import ToolUseBlock
from viewfinder.core.element import ElementAnchor, ElementTree
from viewfinder.core.errors import ViewfinderError
from viewfinder.core.geometry import Point

if TYPE_CHECKING:
    from viewfinder.core.element_sources import ElementSource

log = logging.getLogger(__name__)


class LiveTargets:
    """The tree and the X server of X display ``display`` (None: neither is read).

    The element source and the X connection are made on first use and kept for the
    replay (:meth:`close`). A display whose source cannot be made (no accessibility
    bus) is asked once.
    """

    def __init__(self, display: str | None) -> None:
        self.display = display
        self._source: ElementSource | None = None
        self._failed = display is None
        self._x: Any = None

    def tree(self) -> ElementTree | None:
        """The tree now, or None when none can be read."""
        if self._failed:
            return None
        try:
            if self._source is None:
                # imported here: the element sources load plugins
                from viewfinder.core.element_sources import get_element_source

                self._source = get_element_source("atspi", display=self.display)
            return self._source.read()
        except ViewfinderError as exc:
            log.warning("replay: no accessibility tree on %s: %s", self.display, exc)
            self._failed = self._source is None
            return None

    def refusal(self, anchor: ElementAnchor, point: Point) -> str | None:
        """Why a step recorded on ``anchor`` must not act at ``point`` now; None when it
        may (or when no tree holds the recorded application)."""
        tree = self.tree()
        if tree is None or self.display is None:
            return None
        from viewfinder.xvfb.top_window import anchor_refusal

        return anchor_refusal(self._connection(), tree, anchor, point.x, point.y)

    def step_refusal(self, block: ToolUseBlock, point: Point | None) -> str | None:
        """Why replayed step ``block`` must not act at ``point`` now: another
        application's window is in front there (:meth:`window_refusal`), or the recorded
        element is not what a pointer there reaches (:meth:`refusal`). None when it may,
        or when nothing can tell. Raises ViewfinderError when the X server went away."""
        if point is None:
            return None
        if block.visual_window is not None:
            refused = self.window_refusal(block.visual_window, point)
            if refused is not None:
                return refused
        anchor = block.visual_element
        if anchor is None or not names_a_target(anchor):
            return None
        return self.refusal(anchor, point)

    def window_refusal(self, application: str, point: Point) -> str | None:
        """Why a step recorded on ``application``'s window (its ``WM_CLASS``) must not
        act at ``point`` now: another application's window, or none, is in front
        there. None when it may, or when there is no X display to ask."""
        if self.display is None:
            return None
        from viewfinder.xvfb.top_window import application_at

        now = application_at(self._connection(), point.x, point.y)
        if now == application:
            return None
        where = f"({point.x}, {point.y})"
        if now is None:
            return f"no application's window is in front at {where}; {application!r}'s was"
        return (
            f"the window in front at {where} belongs to {now!r}, not to {application!r} as recorded"
        )

    def _connection(self) -> Any:
        assert self.display is not None, "asked only for an X display"
        if self._x is None:
            from viewfinder.xvfb.connection import open_display

            self._x = open_display(self.display)
        return self._x

    def close(self) -> None:
        """Release the element source and the X connection."""
        if self._source is not None:
            self._source.close()
            self._source = None
        if self._x is not None:
            from viewfinder.xvfb.connection import close_quietly

            close_quietly(self._x)
            self._x = None
