"""Anthropic's computer-use tool input, one pydantic model per action.

Versions ``computer_20250124`` and ``computer_20251124`` (which adds ``zoom``). Fields:
``coordinate`` / ``start_coordinate`` ``[x, y]`` in the model's pixels, ``text`` (the
text to type, a key chord such as ``ctrl+s``, or modifier keys held during a click or
scroll), ``scroll_direction`` (up, down, left, right) and ``scroll_amount`` (wheel
clicks), ``duration`` (seconds) and ``region`` ``[x0, y0, x1, y1]``. A click or scroll
without ``coordinate`` happens where the pointer is. Fields set to null count as absent.
Clicks, ``scroll``, ``mouse_move`` and ``type`` take ``element`` (a ref such as ``e12``)
instead of ``coordinate``: they act at the element's centre (``type`` clicks it first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core.event import EventKind
from viewfinder.desktop.actions import (
    MAX_DURATION_S,
    MAX_WHEEL_CLICKS,
    Action,
    ActionInputError,
    check_text,
    chord,
    element_of,
    validate_model,
)

Coordinate = tuple[int, int]
#: The click actions of Anthropic's shapes: the event kind and button of each.
CLICKS = {
    "left_click": (EventKind.CLICK, "left"),
    "right_click": (EventKind.RIGHT_CLICK, "right"),
    "middle_click": (EventKind.MIDDLE_CLICK, "middle"),
    "double_click": (EventKind.DOUBLE_CLICK, "left"),
    "triple_click": (EventKind.TRIPLE_CLICK, "left"),
}
#: A scroll direction as one wheel click along x and y.
SCROLL_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: str

    def to_action(self) -> Action:
        raise NotImplementedError


class Key(_Input):
    """Press a key or chord: ``text`` is ``Return``, ``ctrl+s``, ``alt+Tab``..."""

    text: str

    def to_action(self) -> Action:
        keys = chord(self.text, "text", self.action)
        return Action("anthropic", self.action, EventKind.KEY, keys=keys)


class HoldKey(_Input):
    """Hold a key or chord down for ``duration`` seconds."""

    text: str
    duration: float = Field(gt=0, le=MAX_DURATION_S)

    def to_action(self) -> Action:
        keys = chord(self.text, "text", self.action)
        return Action(
            "anthropic", self.action, EventKind.HOLD_KEY, keys=keys, duration_s=self.duration
        )


class TypeText(_Input):
    """Type ``text`` (into ``element``, clicked first, when given)."""

    text: str
    element: str | None = None

    def to_action(self) -> Action:
        text = check_text(self.text, "text", self.action)
        element = element_of(self.element, None, self.action)
        return Action("anthropic", self.action, EventKind.TYPE, text=text, element=element)


class Look(_Input):
    """``screenshot`` and ``cursor_position``: look, do nothing."""

    def to_action(self) -> Action:
        observation: Literal["screenshot", "cursor_position"] = (
            "cursor_position" if self.action == "cursor_position" else "screenshot"
        )
        return Action("anthropic", self.action, EventKind.SCREENSHOT, observation=observation)


class Zoom(_Input):
    """Look at ``region`` ``[x0, y0, x1, y1]`` at the screen's full resolution."""

    region: tuple[int, int, int, int]

    def to_action(self) -> Action:
        return Action(
            "anthropic", self.action, EventKind.SCREENSHOT, region=self.region, observation="zoom"
        )


class MouseMove(_Input):
    """Move the pointer to ``coordinate`` (or onto ``element``)."""

    coordinate: Coordinate | None = None
    element: str | None = None
    text: str | None = None

    def to_action(self) -> Action:
        element = element_of(self.element, self.coordinate, self.action)
        if self.coordinate is None and element is None:
            raise ActionInputError(
                "coordinate", "is required", "coordinate [x, y] or element", action=self.action
            )
        return Action(
            "anthropic",
            self.action,
            EventKind.MOVE,
            position=self.coordinate,
            modifiers=_modifiers(self.text, self.action),
            element=element,
        )


class MouseButton(_Input):
    """``left_mouse_down`` / ``left_mouse_up``, at ``coordinate`` or where the pointer is."""

    coordinate: Coordinate | None = None

    def to_action(self) -> Action:
        kind = EventKind.MOUSE_DOWN if self.action == "left_mouse_down" else EventKind.MOUSE_UP
        return Action("anthropic", self.action, kind, position=self.coordinate, button="left")


class Click(_Input):
    """A click of some kind, holding the modifier keys in ``text`` (``shift``, ``ctrl``)."""

    coordinate: Coordinate | None = None
    element: str | None = None
    text: str | None = None

    def to_action(self) -> Action:
        kind, button = CLICKS[self.action]
        return Action(
            "anthropic",
            self.action,
            kind,
            position=self.coordinate,
            button=button,  # type: ignore[arg-type]
            modifiers=_modifiers(self.text, self.action),
            element=element_of(self.element, self.coordinate, self.action),
        )


class Drag(_Input):
    """Press the left button at ``start_coordinate``, move to ``coordinate``, release."""

    start_coordinate: Coordinate
    coordinate: Coordinate

    def to_action(self) -> Action:
        return Action(
            "anthropic",
            self.action,
            EventKind.DRAG,
            position=self.coordinate,
            start=self.start_coordinate,
            button="left",
        )


class Scroll(_Input):
    """``scroll_amount`` wheel clicks towards ``scroll_direction`` at ``coordinate``."""

    coordinate: Coordinate | None = None
    element: str | None = None
    scroll_direction: Literal["up", "down", "left", "right"]
    scroll_amount: int = Field(ge=1, le=MAX_WHEEL_CLICKS)
    text: str | None = None

    def to_action(self) -> Action:
        dx, dy = SCROLL_DIRECTIONS[self.scroll_direction]
        amount = self.scroll_amount
        return Action(
            "anthropic",
            self.action,
            EventKind.SCROLL,
            position=self.coordinate,
            wheel=(dx * amount, dy * amount),
            modifiers=_modifiers(self.text, self.action),
            element=element_of(self.element, self.coordinate, self.action),
        )


class Wait(_Input):
    """Wait ``duration`` seconds, then look."""

    duration: float = Field(ge=0, le=MAX_DURATION_S)

    def to_action(self) -> Action:
        return Action("anthropic", self.action, EventKind.WAIT, duration_s=self.duration)


#: Every action name, with the model that reads it.
MODELS: dict[str, type[_Input]] = {
    "key": Key,
    "hold_key": HoldKey,
    "type": TypeText,
    "cursor_position": Look,
    "screenshot": Look,
    "zoom": Zoom,
    "mouse_move": MouseMove,
    "left_mouse_down": MouseButton,
    "left_mouse_up": MouseButton,
    **dict.fromkeys(CLICKS, Click),
    "left_click_drag": Drag,
    "scroll": Scroll,
    "wait": Wait,
}


def parse(data: Mapping[str, Any]) -> Action:
    """Read one Anthropic computer-use input; :class:`ActionInputError` when it cannot be."""
    name = data.get("action")
    if not isinstance(name, str) or name not in MODELS:
        raise ActionInputError("action", f"unknown action {name!r}", ", ".join(sorted(MODELS)))
    model = MODELS[name]
    present = {key: value for key, value in data.items() if value is not None}
    parsed = validate_model(model, present, name, takes(model))
    return parsed.to_action()


#: How each field is written, for error messages.
SHAPES = {
    "coordinate": "[x, y]",
    "start_coordinate": "[x, y]",
    "region": "[x0, y0, x1, y1]",
    "duration": "seconds",
    "scroll_direction": "up, down, left or right",
    "scroll_amount": "wheel clicks",
    "element": "a ref such as e12",
    "x": "pixels",
    "y": "pixels",
    "button": "left, right, wheel, back or forward",
    "keys": "[key, ...]",
    "path": "[{x, y}, ...]",
    "scroll_x": "pixels",
    "scroll_y": "pixels",
}


def takes(model: type[BaseModel]) -> str:
    """The fields an action takes, for error messages: ``coordinate [x, y] (required), ...``."""
    parts = []
    for field_name, info in model.model_fields.items():
        if field_name in ("action", "type"):
            continue
        shape = SHAPES.get(field_name, "")
        need = "required" if info.is_required() else "optional"
        parts.append(f"{field_name} {shape} ({need})".replace("  ", " "))
    return "fields " + ", ".join(parts) if parts else "no fields besides its name"


def _modifiers(text: str | None, action: str) -> tuple[str, ...]:
    return chord(text, "text", action) if text else ()
