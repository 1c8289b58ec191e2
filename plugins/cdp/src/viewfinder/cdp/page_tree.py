"""A frame's accessibility tree (``Accessibility.getFullAXTree``) as element nodes.

Each node keeps the key its ref is bound to: the frame's id and the node's backend DOM
node id, which stay the node's own while it is in the document, wherever it moves. An
iframe's node holds the tree of the document it shows (read on its own, see
:mod:`viewfinder.cdp.elements`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from viewfinder.cdp.page_layout import Rect
from viewfinder.core.element_sources import ElementNode
from viewfinder.core.geometry import Region

#: Roles that repeat their parent's text, one per line of it: left out.
_SKIPPED_ROLES = {"InlineTextBox"}

BoxMaker = Callable[[Rect], Region | None]


def role_name(raw: str) -> str:
    """``"StaticText"`` -> ``"static text"``: lower-case words, as AT-SPI names roles."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", raw).lower()


def _states(properties: list[dict[str, Any]]) -> frozenset[str]:
    states = set()
    for prop in properties:
        value = prop.get("value", {}).get("value")
        # true/false and tristate properties are states; levels, URLs, ... are not
        if value is True or value in ("true", "mixed") or (prop["name"] == "editable" and value):
            states.add(role_name(prop["name"]))
    return frozenset(states)


def frame_tree(
    nodes: list[dict[str, Any]],
    frame_id: str,
    boxes: dict[int, Rect | None],
    box: BoxMaker,
    inside: dict[int, list[ElementNode]],
) -> list[ElementNode]:
    """The element nodes of one frame's ``nodes``.

    ``boxes``: the visible rectangle of each backend node id (None: clipped away; no
    entry: not laid out). ``box`` makes a region of a rectangle. ``inside``: the nodes
    of the documents shown by the iframes of this frame, by the iframe's backend id.
    """
    by_id = {node["nodeId"]: node for node in nodes}
    names: dict[str, str] = {}

    def build(node_id: str, depth: int) -> list[ElementNode]:
        node = by_id.get(node_id)
        if node is None or depth > 900:  # a cycle or a runaway document: stop there
            return []
        role = node.get("role", {}).get("value", "")
        if role in _SKIPPED_ROLES:
            return []
        children = [
            element for child in node.get("childIds", []) for element in build(child, depth + 1)
        ]
        backend_id = node.get("backendDOMNodeId")
        if backend_id in inside:
            children.extend(inside[backend_id])
        if node.get("ignored") or not role:
            return children  # hoist what it holds
        value = node.get("value", {}).get("value")
        rect = boxes.get(backend_id) if backend_id is not None else None
        return [
            ElementNode(
                role=names.get(role) or names.setdefault(role, role_name(str(role))),
                name=str(node.get("name", {}).get("value", "") or ""),
                value=None if value in (None, "") else str(value),
                states=_states(node.get("properties", [])),
                box=box(rect) if rect is not None else None,
                children=children,
                key=f"{frame_id}/{backend_id}" if backend_id is not None else None,
            )
        ]

    if not nodes:
        return []
    root = next((node for node in nodes if "parentId" not in node), nodes[0])
    return build(root["nodeId"], 0)
