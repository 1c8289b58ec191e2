"""Boxes on the pixels an element really shows: clipped by what holds it, or none.

A toolkit reports each element's whole extents, also where a scrolled list, an overflow
box or the window hides part or all of it. Offered as it is, a row shown only in part
sends a click by its ref to its hidden part, on whatever lies under the list there.
:func:`clip_boxes` is the pass an :class:`~viewfinder.core.element_sources.ElementSource`
that asks for it (``clips_boxes = True``) runs over every read, before refs are given:

- an element whose states say it is not ``showing`` gets no box, in a tree whose
  application reports ``showing`` at all (a toolkit that never sets it is left alone);
- an element's box is cut to the boxes of every element above it (children draw inside
  their parents: a window, a scrolled pane, an overflow box), and wholly cut away it is
  none: an element without a box is never offered nor acted on;
- popups and menus are top-level windows of their own, drawn outside their opener: an
  element of a role in :data:`OWN_WINDOW_ROLES` is not cut by what is above it, and a
  ``menu`` (a menu bar's item and its submenu in one) cuts nothing below it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from viewfinder.core.geometry import Region

if TYPE_CHECKING:
    from viewfinder.core.element_sources import ElementNode

#: Roles drawn in a top-level window of their own (AT-SPI's names, lower case).
OWN_WINDOW_ROLES = frozenset(
    {"window", "frame", "dialog", "alert", "popup menu", "menu", "tool tip", "file chooser"}
)
#: Of those, the ones whose children are not drawn inside their own box: a ``menu`` is
#: the item in its menu bar, and its items are in the submenu's window elsewhere.
UNBOUNDED_ROLES = frozenset({"menu"})
#: The state a toolkit sets on an element that is drawn now.
SHOWING = "showing"

#: A clip as (left, top, right, bottom); None: nothing cuts; :data:`_NOWHERE`: no area.
Clip = tuple[int, int, int, int] | None
_NOWHERE: Clip = (0, 0, 0, 0)


def clip_boxes(roots: Iterable[ElementNode]) -> None:
    """Clip the boxes of ``roots`` and everything below them, in place (see the module).

    One pass with a stack of its own (a deep tree needs no deep recursion), each
    element visited once.
    """
    for root in roots:
        showing = _reports_showing(root)
        stack: list[tuple[ElementNode, Clip]] = [(root, None)]
        while stack:
            node, clip = stack.pop()
            inner = _clip(node, clip, showing)
            stack.extend((child, inner) for child in reversed(node.children))


def intersection(box: Region, clip: Region | None) -> Region | None:
    """The part of ``box`` inside ``clip`` (all of it without a clip), or None."""
    if clip is None:
        return box
    return _cut(box, (clip.x, clip.y, clip.right, clip.bottom))


def _cut(box: Region, clip: Clip) -> Region | None:
    if clip is None:
        return box
    x, y = box.x, box.y
    right, bottom = x + box.width, y + box.height
    left, top = max(x, clip[0]), max(y, clip[1])
    cut_right, cut_bottom = min(right, clip[2]), min(bottom, clip[3])
    if cut_right <= left or cut_bottom <= top:
        return None
    if (left, top, cut_right, cut_bottom) == (x, y, right, bottom):
        return box  # wholly inside: most boxes, kept without a new model
    return Region(x=left, y=top, width=cut_right - left, height=cut_bottom - top)


def _clip(node: ElementNode, clip: Clip, showing: bool) -> Clip:
    """Clip ``node``'s box by ``clip``; the clip its children get."""
    if node.role in OWN_WINDOW_ROLES:
        clip = None  # a window of its own: nothing above it cuts it
    box = node.box
    if box is None:
        return clip  # placed nowhere (an application): it cuts nothing
    cut = _cut(box, clip)
    if showing and SHOWING not in node.states:
        node.box = None
    else:
        node.box = cut
    if node.role in UNBOUNDED_ROLES:
        return None
    # its children draw inside it, shown or not: they are cut the same way
    return _NOWHERE if cut is None else (cut.x, cut.y, cut.right, cut.bottom)


def _reports_showing(node: ElementNode) -> bool:
    """Whether any element of ``node``'s tree has the ``showing`` state."""
    stack = [node]
    while stack:
        current = stack.pop()
        if SHOWING in current.states:
            return True
        stack.extend(current.children)
    return False
