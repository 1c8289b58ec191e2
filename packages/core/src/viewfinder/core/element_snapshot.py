"""Elements as a model reads them: a compact text snapshot and a Set-of-Mark image.

:func:`snapshot_text` lists the elements a model can use (visible, and interactive or
named), one line each, indented under the kept element that contains it::

    elements (atspi, screen pixels; 3 of 5 shown):
    e2 frame "Form" @0,0 300x200
      e4 text ="hello" @0,0 300x34
      e5 push button "Save" @0,44 300x34

``@X,Y WxH`` is the element's box in the model's coordinates: screen pixels times
``scale``, one factor per axis (the scale of the screenshot the model was given: a
1280x800 screen shown at 1024x768 is ``(0.8, 0.96)``), and only the model pixels that
lie wholly on the element, so every point of a listed box, mapped back to the screen,
is on the element. A text past
``max_tokens`` is cut at a line and says how many elements were left out.
:func:`set_of_mark` draws the same elements as numbered boxes on a screenshot (the
number is the ref's: box 12 is ``e12``), for models that ground clicks on marks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from viewfinder.core.element import Element, ElementTree
from viewfinder.core.geometry import Region
from viewfinder.core.result_budget import estimate_tokens
from viewfinder.core.screenshot import Screenshot

#: Roles that only repeat the text of the element holding them.
_TEXT_ROLES = frozenset({"static text", "label", "static"})
#: Mark colours: strong, told apart from each other and from most UI backgrounds.
_COLOURS = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324")
#: Slack for float products that should be whole numbers (0.8 * 1280).
_EPSILON = 1e-9

#: Model pixels per screen pixel: one factor for both axes, or ``(x, y)``.
Scale = float | tuple[float, float]


@dataclass(frozen=True)
class ShownElement:
    """An element a snapshot keeps, with how deep it sits among the kept ones."""

    element: Element
    depth: int


def shown_elements(tree: ElementTree) -> list[ShownElement]:
    """The elements a model gets: visible, and interactive or named (a text that only
    repeats the name of the element holding it is left out)."""
    kept: list[ShownElement] = []

    def visit(element: Element, depth: int, holder_name: str) -> None:
        keep = element.visible and (element.interactive or bool(element.name))
        if keep and element.role in _TEXT_ROLES and element.name == holder_name:
            keep = False
        if keep:
            kept.append(ShownElement(element, depth))
        for child in element.children:
            visit(child, depth + 1 if keep else depth, element.name or holder_name)

    for root in tree.roots:
        visit(root, 0, "")
    return kept


def axes(scale: Scale) -> tuple[float, float]:
    """``scale`` as ``(x, y)`` factors; ValueError unless both are more than 0."""
    sx, sy = (scale, scale) if isinstance(scale, int | float) else scale
    if not (sx > 0 and sy > 0):
        raise ValueError(f"scale must be more than 0 on each axis, got {scale}")
    return (float(sx), float(sy))


def _span(start: int, end: int, factor: float) -> tuple[int, int]:
    """The model pixels ``[first, last)`` showing only screen pixels ``[start, end)``.

    A model pixel ``m`` shows the screen's ``[m / factor, (m + 1) / factor)`` (as the
    desktop's scaling maps them), so these are the ones wholly inside. A span narrower
    than one model pixel keeps the pixel holding its middle.
    """
    first = math.ceil(start * factor - _EPSILON)
    last = math.floor(end * factor + _EPSILON)
    if last <= first:
        first = math.floor((start + end) / 2 * factor)
        last = first + 1
    return first, last


def scaled_box(box: Region, scale: Scale) -> Region:
    """``box`` (screen pixels) in the model's coordinates: the model pixels wholly on it."""
    sx, sy = axes(scale)
    left, right = _span(box.x, box.right, sx)
    top, bottom = _span(box.y, box.bottom, sy)
    return Region(x=left, y=top, width=right - left, height=bottom - top)


def model_box(box: Region, scale: Scale) -> str:
    """``@X,Y WxH`` of ``box`` scaled to the model's coordinates (see :func:`scaled_box`)."""
    if axes(scale) == (1.0, 1.0):
        return f"@{box.x},{box.y} {box.width}x{box.height}"
    shown = scaled_box(box, scale)
    return f"@{shown.x},{shown.y} {shown.width}x{shown.height}"


def _line(shown: ShownElement, scale: Scale) -> str:
    element = shown.element
    parts = [element.ref, element.role]
    if element.name:
        parts.append(_quoted(element.name))
    value = _readable(element.value or "")
    if value and value != _readable(element.name):
        parts.append("=" + _quoted(value))
    for state in ("focused", "checked", "selected", "expanded"):
        if state in element.states:
            parts.append(f"[{state}]")
    if "disabled" in element.states:
        parts.append("[disabled]")
    assert element.box is not None  # shown elements are visible
    parts.append(model_box(element.box, scale))
    return "  " * shown.depth + " ".join(parts)


def _readable(text: str) -> str:
    """``text`` without the object replacement characters AT-SPI puts where a child
    element sits inside a text (a link in a paragraph): they say nothing to a model."""
    return " ".join(text.replace("\ufffc", " ").split())


def _quoted(text: str, limit: int = 80) -> str:
    flat = _readable(text)
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return '"' + flat.replace('"', '\\"') + '"'


def snapshot_text(tree: ElementTree, *, scale: Scale = 1.0, max_tokens: int = 2000) -> str:
    """The compact snapshot of ``tree`` (see the module), within ``max_tokens``.

    ``scale`` maps every box onto the screenshot the model was given: one factor (0.5
    for a screenshot shrunk to half size) or ``(x, y)``, one per axis (the screenshot's
    width over the screen's, its height over the screen's), so the model answers in
    the coordinates of the image it was given.
    """
    sx, sy = axes(scale)
    if max_tokens < 20:
        raise ValueError(f"max_tokens must be at least 20 to say anything, got {max_tokens}")
    shown = shown_elements(tree)
    units = "page pixels" if tree.coordinates == "page" else "screen pixels"
    if sx == sy != 1:
        units += f" x{sx:g}"
    elif sx != sy:
        units += f" x{sx:g} across, x{sy:g} down"
    lines = [_line(item, scale) for item in shown]
    used = 0
    budget = max_tokens - 20  # the header and the note about what was left out
    kept = 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            break
        used += cost
        kept += 1
    header = f"elements ({tree.source}, {units}; {kept} of {tree.count()} shown)"
    body = [header, *lines[:kept]]
    if kept < len(lines):
        body.append(f"… {len(lines) - kept} more elements left out (token budget)")
    if not shown and tree.reason:
        body.append(f"none: {tree.reason}")
    elif tree.reason:
        body.append(f"note: {tree.reason}")
    return "\n".join(body)


def set_of_mark(
    screenshot: Screenshot, elements: ElementTree | Iterable[Element], *, scale: Scale = 1.0
) -> Screenshot:
    """``screenshot`` with a numbered box drawn around each element (PNG).

    ``elements`` is a tree (its shown elements are marked) or the elements to mark;
    their boxes are in screen pixels and ``scale`` maps them onto the screenshot (0.5
    for a half-size one; ``(x, y)`` for one scaled by another factor on each axis), as
    :func:`snapshot_text` lists them: each outline runs on the model pixels at the
    edge of the listed box. The number in each label is the ref's (12 for ``e12``).
    """
    from PIL import ImageDraw, ImageFont

    axes(scale)
    chosen = (
        [shown.element for shown in shown_elements(elements)]
        if isinstance(elements, ElementTree)
        else list(elements)
    )
    image = screenshot.to_pil().convert("RGB")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=12)
    for index, (element, box) in enumerate(_scaled(chosen, scale, image.size)):
        colour = _COLOURS[index % len(_COLOURS)]
        draw.rectangle(box, outline=colour, width=2)
        label = element.ref.removeprefix("e")
        left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
        width, height = right - left + 4, bottom - top + 4
        x, y = box[0], max(box[1] - height, 0)
        draw.rectangle((x, y, x + width, y + height), fill=colour)
        draw.text((x + 2 - left, y + 2 - top), label, fill="white", font=font)
    return Screenshot.from_image(image, source=screenshot.source, region=screenshot.region)


def _scaled(
    elements: list[Element], scale: Scale, size: tuple[int, int]
) -> Iterator[tuple[Element, tuple[int, int, int, int]]]:
    for element in elements:
        if element.box is None:
            continue
        box = scaled_box(element.box, scale)
        right, bottom = min(box.right, size[0]) - 1, min(box.bottom, size[1]) - 1
        if right > box.x and bottom > box.y:
            yield element, (box.x, box.y, right, bottom)
