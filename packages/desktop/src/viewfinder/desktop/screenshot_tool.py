"""The desktop's ``screenshot`` tool: the screen (or a rectangle of it) as an image.

Optionally shrunk, re-encoded, and with the elements on the screen (``elements``: a
snapshot with boxes in the image's pixels; ``set_of_mark``: the image with numbered
boxes). See :mod:`viewfinder.desktop.tools` for how both desktop tools are served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core.tools import Tool, ToolContext, ToolError, ToolResult
from viewfinder.desktop.tools import (
    ELEMENTS_HELP,
    SCREEN_RESOURCE,
    SET_OF_MARK_HELP,
    display_of,
    element_source,
    reconnecting,
)

if TYPE_CHECKING:
    from viewfinder.core.screenshot import Screenshot
    from viewfinder.xvfb.backend import XvfbBackend


class ScreenshotRegion(BaseModel):
    """A rectangle of the screen, in screen pixels."""

    model_config = ConfigDict(extra="forbid")

    x: int = Field(ge=0, description="Left edge, in screen pixels from the left.")
    y: int = Field(ge=0, description="Top edge, in screen pixels from the top.")
    width: int = Field(ge=1, description="Width in pixels.")
    height: int = Field(ge=1, description="Height in pixels.")


class ScreenshotInput(BaseModel):
    """What to capture and how big an image to send back."""

    model_config = ConfigDict(extra="forbid")

    region: ScreenshotRegion | None = Field(
        default=None, description="Only this rectangle of the screen (default: all of it)."
    )
    scale: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Shrink the image by this factor (0-1]; 0.5 sends half the width.",
    )
    max_width: int | None = Field(
        default=None, ge=16, description="Shrink the image to at most this many pixels wide."
    )
    max_height: int | None = Field(
        default=None, ge=16, description="Shrink the image to at most this many pixels high."
    )
    format: Literal["png", "jpeg", "webp"] = Field(
        default="png", description="Image format: png (exact), jpeg or webp (smaller)."
    )
    elements: bool = Field(default=False, description=ELEMENTS_HELP)
    set_of_mark: bool = Field(default=False, description=SET_OF_MARK_HELP)


SCREENSHOT_DESCRIPTION = (
    "Capture this session's screen (or a rectangle of it) as an image, without acting. "
    "Use scale, max_width or max_height for a smaller image; the text says how to turn "
    "the image's pixels back into screen pixels. Coordinates of region are screen "
    "pixels, as the text of an earlier screenshot reports them. elements=true also "
    "lists the elements on the screen with refs the computer tool acts on (element="
    "'e12'); set_of_mark=true adds the image with their numbered boxes."
)


def run_screenshot(arguments: ScreenshotInput, context: ToolContext) -> ToolResult:
    """The ``screenshot`` tool: the screen now, optionally a region, shrunk, re-encoded.

    A shrunk image is made from the frame as grabbed (not from an encoded capture), by
    the result budget's fast filter, and encoded once: what the ``computer`` tool does.
    """
    display = display_of(context, "screenshot")
    from viewfinder.core.errors import RegionError
    from viewfinder.core.geometry import Region
    from viewfinder.core.result_budget import shrink_image
    from viewfinder.core.screenshot import Screenshot

    def make() -> XvfbBackend:
        from viewfinder.xvfb.backend import XvfbBackend

        return XvfbBackend(display)

    region = None
    if arguments.region is not None:
        region = Region(**arguments.region.model_dump())

    def capture(backend: XvfbBackend) -> tuple[tuple[int, int], Screenshot]:
        screen = backend.screen_size()
        width, height = (region.width, region.height) if region is not None else screen
        factor = _factor(arguments, width, height)
        if factor >= 1.0:
            return screen, backend.capture(region=region, format=arguments.format)
        frame = backend.grab(region)
        size = (max(1, round(width * factor)), max(1, round(height * factor)))
        scaled = shrink_image(frame, *size)
        return screen, Screenshot.from_image(
            scaled, source=backend.name, format=arguments.format, region=region
        )

    try:
        _, ((screen_width, screen_height), shot) = reconnecting(
            context, SCREEN_RESOURCE, make, capture, keep=(RegionError,)
        )
    except RegionError as exc:
        raise ToolError(f"screenshot: {exc}") from None
    width, height = (
        (region.width, region.height) if region is not None else (screen_width, screen_height)
    )
    where = f"region {region.x},{region.y} {width}x{height} of " if region is not None else ""
    text = f"screenshot of {where}display {display} ({screen_width}x{screen_height} screen)"
    if shot.width != width or shot.height != height:
        ratio = width / shot.width
        origin = f", then add {region.x},{region.y}" if region is not None else ""
        text += (
            f", sent at {shot.width}x{shot.height}: multiply the image's coordinates by "
            f"{ratio:.4g}{origin} for screen pixels"
        )
    elif region is not None:
        text += f": add {region.x},{region.y} to the image's coordinates for screen pixels"
    extra: list[str | Screenshot] = []
    if arguments.elements or arguments.set_of_mark:
        extra = _elements_of(
            context, display, shot, region, (shot.width / width, shot.height / height), arguments
        )
    return ToolResult.of(
        text,
        shot,
        *extra,
        structured={
            "screen": {"width": screen_width, "height": screen_height},
            "image": {"width": shot.width, "height": shot.height},
            "region": region.model_dump() if region is not None else None,
        },
    )


def _elements_of(
    context: ToolContext,
    display: str,
    shot: Screenshot,
    region: Any,
    scale: tuple[float, float],
    arguments: ScreenshotInput,
) -> list[str | Screenshot]:
    """The snapshot and the Set-of-Mark image of a screenshot, boxes in its pixels."""
    from viewfinder.core.element_snapshot import set_of_mark, snapshot_text
    from viewfinder.desktop.screen_elements import SNAPSHOT_TOKENS, read_or_reason, within

    tree = read_or_reason(element_source(context, display))
    if region is not None:
        tree = within(tree, region)
    parts: list[str | Screenshot] = []
    if arguments.elements:
        snapshot = snapshot_text(tree, scale=scale, max_tokens=SNAPSHOT_TOKENS)
        where = f", moved by -{region.x},-{region.y} into the region" if region else ""
        parts.append(f"{snapshot}\n(boxes in the pixels of the image above{where})")
    if arguments.set_of_mark:
        parts.append(set_of_mark(shot, tree, scale=scale))
    return parts


def _factor(arguments: ScreenshotInput, width: int, height: int) -> float:
    """The scale the call asked for: the smallest of ``scale`` and the max sizes."""
    factor = 1.0
    if arguments.scale is not None:
        factor = arguments.scale
    if arguments.max_width is not None:
        factor = min(factor, arguments.max_width / width)
    if arguments.max_height is not None:
        factor = min(factor, arguments.max_height / height)
    return factor


def screenshot_tool() -> Tool:
    """The ``screenshot`` tool's definition."""
    return Tool(
        "screenshot",
        SCREENSHOT_DESCRIPTION,
        ScreenshotInput,
        run_screenshot,
        title="Screenshot",
        annotations={"readOnlyHint": True, "openWorldHint": False},
    )
