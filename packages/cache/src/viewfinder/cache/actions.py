"""What a step does: its computer-use action, the point it acts at, and whether to hash it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from viewfinder.cache.models import ToolUseBlock
from viewfinder.core.event import Event
from viewfinder.core.geometry import Point

#: Computer-use actions that get a hash by default: the click-like ones and text entry.
#: A drag is validated where it starts, the point it presses on.
DEFAULT_HASHED_ACTIONS: frozenset[str] = frozenset(
    {
        "left_click",
        "right_click",
        "middle_click",
        "double_click",
        "triple_click",
        "left_mouse_down",
        "left_click_drag",
        "type",
    }
)
#: Every computer-use action replay knows (what ``--hashed-actions`` may name).
COMPUTER_ACTIONS: frozenset[str] = frozenset(
    {
        *DEFAULT_HASHED_ACTIONS,
        "mouse_move",
        "left_mouse_up",
        "scroll",
        "key",
        "hold_key",
        "wait",
        "screenshot",
        "cursor_position",
    }
)
#: Actions that only look at the screen; they are left out of a recorded trajectory.
OBSERVING_ACTIONS: frozenset[str] = frozenset({"screenshot", "cursor_position", "zoom"})


def action_point(tool_input: dict[str, Any]) -> Point | None:
    """The screen point a step acts at: where a drag starts, else its ``coordinate``.

    Also reads ``x``/``y`` inputs (as other tool schemas use). None when the action has
    no point (typing, a key) or the values are not a pair of numbers.
    """
    for key in ("start_coordinate", "coordinate"):
        value = tool_input.get(key)
        if key == "start_coordinate" and tool_input.get("action") != "left_click_drag":
            continue
        if isinstance(value, list | tuple) and len(value) == 2:
            return _point(value[0], value[1])
    if "x" in tool_input and "y" in tool_input:
        return _point(tool_input["x"], tool_input["y"])
    return None


def _point(x: Any, y: Any) -> Point | None:
    if isinstance(x, bool) or isinstance(y, bool):
        return None
    if not isinstance(x, int | float) or not isinstance(y, int | float):
        return None
    return Point(x=int(x), y=int(y))


def point_field(tool_input: dict[str, Any]) -> str:
    """The input field :func:`action_point` read (for error messages)."""
    if tool_input.get("action") == "left_click_drag" and "start_coordinate" in tool_input:
        return "input.start_coordinate"
    if "coordinate" in tool_input:
        return "input.coordinate"
    return "input.x"


def is_hashed(block: ToolUseBlock, actions: Iterable[str] = DEFAULT_HASHED_ACTIONS) -> bool:
    """True when ``block``'s action is one that gets a hash."""
    action = block.action
    return action is not None and action in frozenset(actions)


def is_observation(block: ToolUseBlock) -> bool:
    """True for a screenshot (or other look-only) action, which a replay has no need of."""
    return block.action in OBSERVING_ACTIONS


def block_event(block: ToolUseBlock) -> Event | None:
    """The :class:`~viewfinder.core.Event` a step performs; None if it is no computer action.

    A malformed computer-use input raises :class:`~viewfinder.core.EventFormatError`.
    """
    if block.action is None:
        return None
    return Event.from_computer_use(block.input)


def describe(block: ToolUseBlock) -> str:
    """A short human description: ``left_click (120, 45)``, ``type 'Ada'``, ``tool foo``."""
    action = block.action
    if action is None:
        return f"tool {block.name}"
    point = action_point(block.input)
    if point is not None:
        return f"{action} ({point.x}, {point.y})"
    text = block.input.get("text")
    if isinstance(text, str):
        shown = text if len(text) <= 24 else text[:21] + "..."
        return f"{action} {shown!r}"
    return action
