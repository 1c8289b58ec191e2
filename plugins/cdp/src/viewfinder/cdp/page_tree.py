"""A frame's elements, as the page script read them (:mod:`viewfinder.cdp.page_script`),
as element nodes.

Each node keeps the key its ref is bound to: the frame's id, the document's epoch and
the node's id in the reading world (given to the node object itself, so it stays the
node's own while it is in the document, wherever it moves). An iframe's node holds the
tree of the document it shows (read on its own, see :mod:`viewfinder.cdp.elements`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from viewfinder.cdp.page_layout import Rect
from viewfinder.core.element_sources import ElementNode
from viewfinder.core.geometry import Region

BoxMaker = Callable[[Rect], Region | None]


def frame_tree(
    read: dict[str, Any],
    frame_id: str,
    boxes: dict[int, Rect | None],
    box: BoxMaker,
    inside: dict[int, list[ElementNode]],
) -> list[ElementNode]:
    """The element nodes of one frame's ``read``.

    ``boxes``: the visible rectangle of each node id (None: clipped away). ``box``
    makes a region of a rectangle. ``inside``: the nodes of the documents shown by the
    iframes of this frame, by the iframe's node id.
    """
    ids: list[int] = read["ids"]
    prefix = f"{frame_id}/{read['epoch']}/"
    made: list[ElementNode] = []
    roots: list[ElementNode] = []
    states_of: dict[str, frozenset[str]] = {}
    strings: list[str] = read["strings"]
    for at, parent, role_at, name, value, states_at in read["elements"]:
        node_id = ids[at]
        rect = boxes.get(node_id)
        role, states = strings[role_at], strings[states_at]
        flags = states_of.get(states)
        if flags is None:
            flags = states_of[states] = frozenset(states.split(",")) if states else frozenset()
        node = ElementNode(
            role=role,
            name=name,
            value=None if value in (None, "") else value,
            states=flags,
            box=box(rect) if rect is not None else None,
            children=list(inside.get(node_id, ())),
            key=prefix + str(node_id),
        )
        made.append(node)
        if 0 <= parent < len(made) - 1:
            made[parent].children.append(node)
        else:
            roots.append(node)
    return roots
