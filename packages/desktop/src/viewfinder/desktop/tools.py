"""The desktop's tools for an agent: ``computer`` and ``screenshot``.

Registered through ``viewfinder_register_tools`` (see plugin.py), so the MCP server and
the server's desktop environment list and call them like every other tool. Both act on
the calling session's display (``context.display``). ``computer`` keeps one
:class:`~viewfinder.desktop.ComputerTool` per session (``context.resource("computer",
...)``), scaled for ``context.values["target"]`` when the session set one.

A host that can cancel a call puts a :class:`threading.Event` under
``context.values[CANCEL_VALUE]`` and sets it: ``computer``'s ``wait`` and ``hold_key``
(up to 100 s) end their pause then, with the keys released. A display that went away
and came back (an X server restarted under ``--display``) is reconnected to by both
tools on their next call.

This module imports only pydantic and core at import time; the functions import the
capture and input machinery when they first run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core.tools import Tool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from viewfinder.core.screenshot import Screenshot
    from viewfinder.desktop.computer import ComputerTool
    from viewfinder.desktop.results import ComputerResult
    from viewfinder.xvfb.backend import XvfbBackend

_Resource = TypeVar("_Resource")
_Outcome = TypeVar("_Outcome")

#: ``ToolContext.values`` key of the host's cancel event (a ``threading.Event``).
CANCEL_VALUE = "cancel"

#: Every action of Anthropic's computer-use tool (``computer_20250124`` and
#: ``computer_20251124``).
ComputerAction = Literal[
    "key",
    "hold_key",
    "type",
    "cursor_position",
    "mouse_move",
    "left_mouse_down",
    "left_mouse_up",
    "left_click",
    "left_click_drag",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "scroll",
    "wait",
    "screenshot",
    "zoom",
]


class ComputerInput(BaseModel):
    """Anthropic's computer-use tool input: one action and the fields it needs."""

    model_config = ConfigDict(extra="forbid")

    action: ComputerAction = Field(
        description=(
            "What to do. Mouse: mouse_move, left_click, right_click, middle_click, "
            "double_click, triple_click (each at `coordinate`, or where the pointer is), "
            "left_click_drag (from `start_coordinate` to `coordinate`), left_mouse_down, "
            "left_mouse_up, scroll (at `coordinate`, `scroll_direction` times "
            "`scroll_amount`). Keyboard: type (`text`), key (`text` is a key or combination "
            "such as 'Return' or 'ctrl+s'), hold_key (`text` held for `duration` s). Other: "
            "screenshot, cursor_position, wait (`duration` s), zoom (`region` at full "
            "resolution). Every action returns a screenshot taken once the screen settled."
        )
    )
    coordinate: list[int] | None = Field(
        default=None,
        description=(
            "[x, y] in pixels of the screenshots this tool returns (x from the left edge, y "
            "from the top): where to move, click or scroll; the end of a left_click_drag."
        ),
        min_length=2,
        max_length=2,
    )
    start_coordinate: list[int] | None = Field(
        default=None,
        description="[x, y] where a left_click_drag starts, in screenshot pixels.",
        min_length=2,
        max_length=2,
    )
    text: str | None = Field(
        default=None,
        description=(
            "For type: the text to type. For key and hold_key: a key or combination in "
            "xdotool names ('Return', 'Tab', 'ctrl+a', 'shift+Left'). For clicks and "
            "scroll: modifier keys to hold meanwhile ('shift', 'ctrl+shift')."
        ),
    )
    scroll_direction: Literal["up", "down", "left", "right"] | None = Field(
        default=None, description="For scroll: which way the content moves into view."
    )
    scroll_amount: int | None = Field(
        default=None, ge=0, description="For scroll: how many wheel clicks."
    )
    duration: float | None = Field(
        default=None,
        ge=0,
        description="Seconds: how long hold_key holds the key, how long wait waits (up to 100).",
    )
    region: list[int] | None = Field(
        default=None,
        min_length=4,
        max_length=4,
        description=(
            "For zoom: [x0, y0, x1, y1], the corners of the rectangle to show at full "
            "resolution, in screenshot pixels."
        ),
    )


COMPUTER_DESCRIPTION = (
    "Use the mouse and keyboard on this session's screen and see the result. Each call "
    "performs one action, waits until the screen stops changing, and returns a screenshot "
    "of the whole screen (for zoom: of the region) with a line saying what was done. "
    "Coordinates are pixels of the returned screenshots, which may be scaled down from "
    "the real screen; the tool maps them back. Take a screenshot first to see where "
    "things are, and click the middle of what you want to hit. A malformed action comes "
    "back as an error saying which field is wrong; nothing was done then."
)


def run_computer(arguments: ComputerInput, context: ToolContext) -> ToolResult:
    """The ``computer`` tool: one action through the session's ComputerTool."""
    display = _display_of(context, "computer")

    def make() -> ComputerTool:
        from viewfinder.desktop.computer import ComputerTool

        return ComputerTool(display, target=context.values.get("target"))

    def act(tool: ComputerTool) -> ComputerResult:
        # no input connection now (the display went away): the action itself says why
        with contextlib.suppress(Exception):
            tool.interrupt_pauses_with(context.values.get(CANCEL_VALUE))
        return tool(arguments.model_dump(exclude_none=True), api="anthropic")

    tool, result = _reconnecting(context, COMPUTER_RESOURCE, make, act)
    parts: list[str | Screenshot] = []
    if result.text:
        parts.append(result.text)
    shot = result.screenshot
    if shot is not None:
        parts.append(shot)
    screen_width, screen_height = tool.screen_size
    structured = {
        "action": arguments.action,
        "screen": {"width": screen_width, "height": screen_height},
        "image": None if shot is None else {"width": shot.width, "height": shot.height},
    }
    return ToolResult.of(
        *parts,
        structured=structured,
        is_error=result.is_error,
        error_kind="input" if result.error_type in _INPUT_ERRORS else "execution",
    )


#: ComputerResult.error_type names of an action that could not be read (nothing done).
_INPUT_ERRORS = frozenset({"ActionInputError", "CoordinateRangeError"})


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


SCREENSHOT_DESCRIPTION = (
    "Capture this session's screen (or a rectangle of it) as an image, without acting. "
    "Use scale, max_width or max_height for a smaller image; the text says how to turn "
    "the image's pixels back into screen pixels. Coordinates of region are screen "
    "pixels, as the text of an earlier screenshot reports them."
)


def run_screenshot(arguments: ScreenshotInput, context: ToolContext) -> ToolResult:
    """The ``screenshot`` tool: the screen now, optionally a region, shrunk, re-encoded.

    A shrunk image is made from the frame as grabbed (not from an encoded capture), by
    the result budget's fast filter, and encoded once: what the ``computer`` tool does.
    """
    display = _display_of(context, "screenshot")
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
        _, ((screen_width, screen_height), shot) = _reconnecting(
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
    return ToolResult.of(
        text,
        shot,
        structured={
            "screen": {"width": screen_width, "height": screen_height},
            "image": {"width": shot.width, "height": shot.height},
            "region": region.model_dump() if region is not None else None,
        },
    )


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


#: ``ToolContext`` resource keys of the screenshot tool's capture backend and of the
#: computer tool's ComputerTool.
SCREEN_RESOURCE = "screen"
COMPUTER_RESOURCE = "computer"


def _reconnecting(
    context: ToolContext,
    key: str,
    make: Callable[[], _Resource],
    use: Callable[[_Resource], _Outcome],
    *,
    keep: tuple[type[Exception], ...] = (),
) -> tuple[_Resource, _Outcome]:
    """The session's resource ``key`` (made by ``make``) and ``use(resource)``; when that
    fails (but for ``keep``), the resource is closed and made afresh, once: its
    connection was to an X server that went away, and one may run there again now."""
    for attempt in (1, 2):
        resource = context.resource(key, make)
        try:
            return resource, use(resource)
        except keep:
            raise
        except Exception:
            context.drop_resource(key)
            closer = getattr(resource, "close", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    closer()
            if attempt == 2:
                raise
    raise AssertionError("unreachable: the second attempt returns or raises")


def _display_of(context: ToolContext, tool: str) -> str:
    if not context.display:
        raise ToolError(
            f"{tool}: this session has no screen (no X display); start a desktop session, "
            "or give the tool context a display"
        )
    return context.display


def computer_tool() -> Tool:
    """The ``computer`` tool's definition."""
    return Tool(
        "computer",
        COMPUTER_DESCRIPTION,
        ComputerInput,
        run_computer,
        title="Computer (mouse, keyboard, screen)",
        annotations={"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False},
    )


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


def desktop_tools() -> list[Tool]:
    """Every tool the desktop package registers."""
    return [computer_tool(), screenshot_tool()]
