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


def frame_boxes(
    read: dict[str, Any], factor: float, clip: Rect | None, origin: tuple[float, float]
) -> tuple[dict[int, Rect | None], dict[int, FramePlace]]:
    """The visible box of every node of one frame's read (None: wholly clipped), by
    node id, and where each iframe element of it places its content, by its node id.

    ``read``: what :data:`viewfinder.cdp.page_script.SCRIPT` answers (each node's
    parent, name, border box and padding box in CSS pixels of the frame's viewport,
    and its overflow and position as one string ``"<x> <y> <position>"``). ``factor``:
    device pixels per CSS pixel. ``clip``: the rectangle the frame is drawn in (None:
    not drawn) and ``origin``: where its viewport's (0, 0) is, both in device pixels
    of the top viewport.
    """
    strings: list[str] = read["strings"]
    parents: list[int] = read["parents"]
    ids: list[int] = read["ids"]
    names: list[int] = read["names"]
    bounds: list[list[float]] = read["bounds"]
    styles: list[int] = read["styles"]
    client_rects: list[list[float]] = read["clients"]
    # a page has a few styles: each is split once (overflow x, overflow y, position)
    split: dict[int, tuple[bool, bool, str]] = {}
    for at in set(styles):
        words = [*_string(strings, at).split(), "visible", "visible", "static"][:3]
        split[at] = (words[0] in _CLIPPING, words[1] in _CLIPPING, words[2])
    shift_x, shift_y = origin
    boxes: dict[int, Rect | None] = {}
    frames: dict[int, FramePlace] = {}
    count = len(parents)
    # the clip for content in normal flow, and for absolutely positioned descendants
    flow: list[Rect | None] = [None] * count
    contain: list[Rect | None] = [None] * count
    for node in range(count):
        parent = parents[node]
        known = 0 <= parent < node
        flow_in = flow[parent] if known else clip
        contain_in = contain[parent] if known else clip
        clips_x, clips_y, position = split.get(styles[node], (False, False, "static"))
        if position == "fixed":
            incoming = clip
        elif position == "absolute":
            incoming = contain_in
        else:
            incoming = flow_in
        own = incoming
        x, y, width, height = bounds[node]
        if factor != 1.0:
            x, y, width, height = x * factor, y * factor, width * factor, height * factor
        rect = (x + shift_x, y + shift_y, x + shift_x + width, y + shift_y + height)
        node_id = ids[node]
        boxes[node_id] = intersect(rect, incoming) if incoming is not None else None
        client = client_rects[node]
        if client:  # only what clips or shows a frame sends its padding box
            inner = _padding_box(rect, client, factor)
            name = _string(strings, names[node])
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
                frames[node_id] = FramePlace(origin=(inner[0], inner[1]), clip=frame_clip)
        flow[node] = own
        contain[node] = own if position != "static" else contain_in
    return boxes, frames


def _padding_box(rect: Rect, client: list[float], factor: float) -> Rect:
    """The padding box of a border box ``rect`` (its client rect: CSS pixels, from it)."""
    if len(client) < 4:
        return rect
    left, top, width, height = (value * factor for value in client)
    return (rect[0] + left, rect[1] + top, rect[0] + left + width, rect[1] + top + height)


def _string(strings: list[str], index: Any) -> str:
    return strings[index] if isinstance(index, int) and 0 <= index < len(strings) else ""
