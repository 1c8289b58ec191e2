"""The desktop's tools for an agent: ``computer`` and ``screenshot``.

Registered through ``viewfinder_register_tools`` (see plugin.py), so the MCP server and
the server's desktop environment list and call them like every other tool. Both act on
the calling session's display (``context.display``). ``computer`` keeps one
:class:`~viewfinder.desktop.ComputerTool` per session (``context.resource("computer",
...)``), scaled for ``context.values["target"]`` when the session set one.

Both can return the elements on the screen (``elements: true``: a snapshot of roles,
names, refs and boxes in the returned image's pixels) and a Set-of-Mark image
(``set_of_mark: true``); ``computer`` acts on an element by ref (``element: "e12"``).
One element source per session (``context.resource("elements", ...)``) serves both, so
a ref from a screenshot names the same element in the next computer call. A host sets
``context.values["elements"]`` to have every computer result carry the elements.

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
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core.tools import Tool, ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from viewfinder.core.screenshot import Screenshot
    from viewfinder.desktop.computer import ComputerTool
    from viewfinder.desktop.results import ComputerResult

_Resource = TypeVar("_Resource")
_Outcome = TypeVar("_Outcome")

#: ``ToolContext.values`` key of the host's cancel event (a ``threading.Event``).
CANCEL_VALUE = "cancel"
#: ``ToolContext.values`` key: True makes every computer result carry the elements.
ELEMENTS_VALUE = "elements"
#: What the elements' fields say, for both tools' schemas.
ELEMENTS_HELP = (
    "Also return the elements on the screen (from the apps' accessibility trees): one "
    "line each with its ref (e12), role, name, value and box @x,y wxh in pixels of the "
    "returned screenshot. An app that exposes none (Tk, plain X) gives an empty list "
    "with the reason."
)
SET_OF_MARK_HELP = (
    "Also return the screenshot with a numbered box drawn around each element (box 12 "
    "is element e12)."
)

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
    element: str | None = Field(
        default=None,
        description=(
            "Instead of coordinate: the ref of an element (e12) listed with an earlier "
            "result; the action happens at its centre as it is now (clicks, scroll, "
            "mouse_move; type clicks it first). An element no longer on the screen is an "
            "error naming it."
        ),
    )
    elements: bool | None = Field(default=None, description=ELEMENTS_HELP)
    set_of_mark: bool | None = Field(default=None, description=SET_OF_MARK_HELP)


COMPUTER_DESCRIPTION = (
    "Use the mouse and keyboard on this session's screen and see the result. Each call "
    "performs one action, waits until the screen stops changing, and returns a screenshot "
    "of the whole screen (for zoom: of the region) with a line saying what was done. "
    "Coordinates are pixels of the returned screenshots, which may be scaled down from "
    "the real screen; the tool maps them back. Take a screenshot first to see where "
    "things are, and click the middle of what you want to hit. A malformed action comes "
    "back as an error saying which field is wrong; nothing was done then. With "
    "elements=true the result also lists the elements on the screen with refs; act on "
    "one with element='e12' instead of a coordinate."
)


def run_computer(arguments: ComputerInput, context: ToolContext) -> ToolResult:
    """The ``computer`` tool: one action through the session's ComputerTool."""
    display = display_of(context, "computer")

    def make() -> ComputerTool:
        from viewfinder.desktop.computer import ComputerTool

        return ComputerTool(
            display,
            target=context.values.get("target"),
            elements=bool(context.values.get(ELEMENTS_VALUE)),
            element_source=element_source(context, display),
        )

    def act(tool: ComputerTool) -> ComputerResult:
        # no input connection now (the display went away): the action itself says why
        with contextlib.suppress(Exception):
            tool.interrupt_pauses_with(context.values.get(CANCEL_VALUE))
        return tool(arguments.model_dump(exclude_none=True), api="anthropic")

    tool, result = reconnecting(context, COMPUTER_RESOURCE, make, act)
    parts: list[str | Screenshot] = []
    if result.text:
        parts.append(result.text)
    shot = result.screenshot
    if shot is not None:
        parts.append(shot)
    if result.elements_text:
        parts.append(result.elements_text)
    if result.marked is not None:
        parts.append(result.marked)
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


#: ComputerResult.error_type names of an action that could not be read or named an
#: element that is not there (nothing was done).
_INPUT_ERRORS = frozenset(
    {
        "ActionInputError",
        "CoordinateRangeError",
        "ElementGoneError",
        "ElementCoveredError",
        "ElementDisabledError",
    }
)


def element_source(context: ToolContext, display: str) -> Any:
    """The session's element source (one for both tools, so refs agree)."""

    def make() -> Any:
        from viewfinder.core.element_sources import get_element_source

        return get_element_source("atspi", display=display)

    return context.resource(ELEMENTS_RESOURCE, make)


#: ``ToolContext`` resource keys of the screenshot tool's capture backend and of the
#: computer tool's ComputerTool.
SCREEN_RESOURCE = "screen"
COMPUTER_RESOURCE = "computer"
ELEMENTS_RESOURCE = "elements"


def reconnecting(
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


def display_of(context: ToolContext, tool: str) -> str:
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


def desktop_tools() -> list[Tool]:
    """Every tool the desktop package registers."""
    from viewfinder.desktop.screenshot_tool import screenshot_tool

    return [computer_tool(), screenshot_tool()]
