"""Where a page's elements are drawn: their boxes, clipped.

A frame's read (:mod:`viewfinder.cdp.page_script`) gives each node's border box and
padding box in CSS pixels of the frame's viewport; here they are turned into device
pixels of the top viewport (times the device scale factor and the browser's zoom, as
the layout viewport's size in ``Page.getLayoutMetrics`` against its CSS size says),
moved by the place of each iframe's content, and clipped to every ancestor that
clips its overflow (``hidden``, ``auto``, ``scroll``, ``clip``: what a scrolling list
or a fixed-height panel hides), to each iframe it is in and to the viewport. What is
wholly clipped has no box.

Which ancestors clip follows CSS's containing blocks: an absolutely positioned element
escapes the clips of ancestors below its nearest positioned ancestor, a fixed one every
clip but the viewport's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Overflow values that clip what is drawn outside the padding box.
_CLIPPING = {"hidden", "auto", "scroll", "clip", "overlay"}
#: Their overflow is the viewport's (CSS propagates it), which clips anyway.
_VIEWPORT_OWNERS = {"HTML", "BODY"}
#: Elements whose content is another document.
FRAME_OWNERS = {"IFRAME", "FRAME"}

#: left, top, right, bottom in device pixels of the top viewport.
Rect = tuple[float, float, float, float]


def intersect(a: Rect, b: Rect) -> Rect | None:
    """The part of ``a`` inside ``b``, or None when less than a pixel is left."""
    left, top = max(a[0], b[0]), max(a[1], b[1])
    right, bottom = min(a[2], b[2]), min(a[3], b[3])
    if right - left < 1 or bottom - top < 1:
        return None
    return (left, top, right, bottom)


@dataclass
class FramePlace:
    """Where an iframe's content is drawn: the origin of its document (the top-left of
    its content box) and the rectangle it clips its document to."""

    origin: tuple[float, float]
    clip: Rect | None
    #: the index in the snapshot of the document holding the iframe element
    document: int = 0


def frame_boxes(
    read: dict[str, Any], factor: float, clip: Rect | None, origin: tuple[float, float]
) -> tuple[dict[int, Rect | None], dict[int, FramePlace]]:
    """The visible box of every node of one frame's read (None: wholly clipped), by
    node id, and where each iframe element of it places its content, by its node id.

    ``read``: what :data:`viewfinder.cdp.page_script.SCRIPT` answers (each node's
    parent, name, border box and padding box in CSS pixels of the frame's viewport,
    overflow and position). ``factor``: device pixels per CSS pixel. ``clip``: the
    rectangle the frame is drawn in (None: not drawn) and ``origin``: where its
    viewport's (0, 0) is, both in device pixels of the top viewport.
    """
    count = len(read["parents"])
    document = {
        "nodes": {
            "parentIndex": read["parents"],
            "backendNodeId": read["ids"],
            "nodeName": read["names"],
        },
        "layout": {
            "nodeIndex": range(count),
            "bounds": read["bounds"],
            "styles": read["styles"],
            "clientRects": read["clients"],
        },
    }
    boxes: dict[int, Rect | None] = {}
    frames = _document(document, read["strings"], factor, origin, clip, boxes, scale=factor)
    return boxes, {owner: place for owner, _, place in frames}


def _document(
    document: dict[str, Any],
    strings: list[str],
    factor: float,
    origin: tuple[float, float],
    clip: Rect | None,
    boxes: dict[int, Rect | None],
    scale: float = 1.0,
) -> list[tuple[int, int | None, FramePlace]]:
    """Fill ``boxes`` for one document; return its iframes (backend id, the index of
    their document in the snapshot if it holds it, where their content goes).
    ``scale``: device pixels per unit of the bounds (1: a layout snapshot's)."""
    nodes = document["nodes"]
    parents: list[int] = nodes.get("parentIndex", [])
    backend_ids: list[int] = nodes.get("backendNodeId", [])
    names: list[int] = nodes.get("nodeName", [])
    layout = document.get("layout", {})
    node_index = layout.get("nodeIndex", [])
    laid: dict[int, int] = (
        {node: node for node in node_index}
        if isinstance(node_index, range)
        else {node: k for k, node in enumerate(node_index)}
    )
    bounds = layout.get("bounds", [])
    styles = layout.get("styles", [])
    client_rects = layout.get("clientRects", [])
    content = nodes.get("contentDocumentIndex", {})
    content_of = dict(zip(content.get("index", []), content.get("value", []), strict=False))
    shift_x = origin[0] - document.get("scrollOffsetX", 0)
    shift_y = origin[1] - document.get("scrollOffsetY", 0)
    frames: list[tuple[int, int | None, FramePlace]] = []
    count = len(parents)
    # the clip for content in normal flow, and for absolutely positioned descendants
    flow: list[Rect | None] = [None] * count
    contain: list[Rect | None] = [None] * count
    for node in range(count):
        parent = parents[node]
        known = 0 <= parent < node
        flow_in = flow[parent] if known else clip
        contain_in = contain[parent] if known else clip
        k = laid.get(node)
        style = [_string(strings, s) for s in styles[k]] if k is not None and styles else []
        position = style[2] if len(style) > 2 else "static"
        if position == "fixed":
            incoming = clip
        elif position == "absolute":
            incoming = contain_in
        else:
            incoming = flow_in
        own = incoming
        if k is not None:
            x, y, width, height = bounds[k]
            if scale != 1.0:
                x, y, width, height = x * scale, y * scale, width * scale, height * scale
            rect = (x + shift_x, y + shift_y, x + shift_x + width, y + shift_y + height)
            backend_id = backend_ids[node]
            boxes[backend_id] = intersect(rect, incoming) if incoming is not None else None
            inner = _padding_box(rect, client_rects[k] if k < len(client_rects) else [], factor)
            name = _string(strings, names[node]) if node < len(names) else ""
            clips_x = len(style) > 0 and style[0] in _CLIPPING
            clips_y = len(style) > 1 and style[1] in _CLIPPING
            if (clips_x or clips_y) and name not in _VIEWPORT_OWNERS and own is not None:
                own = intersect(
                    own,
                    (
                        inner[0] if clips_x else own[0],
                        inner[1] if clips_y else own[1],
                        inner[2] if clips_x else own[2],
                        inner[3] if clips_y else own[3],
                    ),
                )
            if name in FRAME_OWNERS:
                frame_clip = intersect(inner, incoming) if incoming is not None else None
                place = FramePlace(origin=(inner[0], inner[1]), clip=frame_clip)
                frames.append((backend_id, content_of.get(node), place))
        flow[node] = own
        contain[node] = own if position != "static" else contain_in
    return frames


def _padding_box(rect: Rect, client: list[float], factor: float) -> Rect:
    """The padding box of a border box ``rect`` (its client rect: CSS pixels, from it)."""
    if len(client) < 4:
        return rect
    left, top, width, height = (value * factor for value in client)
    return (rect[0] + left, rect[1] + top, rect[0] + left + width, rect[1] + top + height)


def _string(strings: list[str], index: Any) -> str:
    return strings[index] if isinstance(index, int) and 0 <= index < len(strings) else ""
