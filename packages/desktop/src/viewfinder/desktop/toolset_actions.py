"""The members of Anthropic's computer toolset (``computer_toolset_20260801``), read into
:class:`~viewfinder.desktop.actions.Action`.

Each member is a tool of its own: the model calls ``left_click`` with ``{"coordinate":
[x, y]}``, not ``computer`` with ``{"action": "left_click", ...}``. One pydantic model per
member holds exactly the fields of the member's input in the SDK's types
(``anthropic.types.beta.BetaComputer*Input``); a field the member does not take is an
error naming it. What differs from the single ``computer_20251124`` tool:

- ``key`` takes ``repeat``, how many times the chord is pressed (default 1);
- ``left_click_drag`` takes ``text``, modifier keys held during the drag;
- ``mouse_move`` needs ``coordinate`` and takes no modifiers;
- ``left_mouse_down`` / ``left_mouse_up`` take no fields: they act where the pointer is;
- ``hold_key`` and ``wait`` take whole seconds.

Coordinates are in the screenshots' pixels, as for the single tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core.event import EventKind
from viewfinder.desktop.actions import (
    MAX_DURATION_S,
    MAX_KEY_REPEAT,
    MAX_WHEEL_CLICKS,
    Action,
    ActionInputError,
    check_text,
    chord,
    validate_model,
)
from viewfinder.desktop.anthropic_actions import CLICKS, SCROLL_DIRECTIONS, takes
from viewfinder.desktop.tools import ComputerAction

Coordinate = tuple[int, int]
#: Every member of the toolset, in the SDK's order (``BetaComputerMemberName``): the
#: computer tool's actions, one tool each.
MEMBERS: tuple[str, ...] = get_args(ComputerAction)


class _Member(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def to_action(self, name: str) -> Action:
        raise NotImplementedError


def _held(text: str | None, name: str) -> tuple[str, ...]:
    return chord(text, "text", name) if text else ()


class Key(_Member):
    """Press a key or chord (``Return``, ``ctrl+s``), ``repeat`` times."""

    text: str
    repeat: int | None = Field(default=None, ge=1, le=MAX_KEY_REPEAT)

    def to_action(self, name: str) -> Action:
        keys = chord(self.text, "text", name)
        return Action("anthropic", name, EventKind.KEY, keys=keys, repeat=self.repeat or 1)


class HoldKey(_Member):
    """Hold a key or chord down for ``duration`` seconds."""

    text: str
    duration: int = Field(gt=0, le=MAX_DURATION_S)

    def to_action(self, name: str) -> Action:
        keys = chord(self.text, "text", name)
        return Action(
            "anthropic", name, EventKind.HOLD_KEY, keys=keys, duration_s=float(self.duration)
        )


class TypeText(_Member):
    """Type ``text`` where the keyboard focus is."""

    text: str

    def to_action(self, name: str) -> Action:
        return Action("anthropic", name, EventKind.TYPE, text=check_text(self.text, "text", name))


class NoFields(_Member):
    """``screenshot``, ``cursor_position``, ``left_mouse_down`` and ``left_mouse_up``."""

    def to_action(self, name: str) -> Action:
        if name == "left_mouse_down":
            return Action("anthropic", name, EventKind.MOUSE_DOWN, button="left")
        if name == "left_mouse_up":
            return Action("anthropic", name, EventKind.MOUSE_UP, button="left")
        observation: Literal["screenshot", "cursor_position"] = (
            "cursor_position" if name == "cursor_position" else "screenshot"
        )
        return Action("anthropic", name, EventKind.SCREENSHOT, observation=observation)


class MouseMove(_Member):
    """Move the pointer to ``coordinate``."""

    coordinate: Coordinate

    def to_action(self, name: str) -> Action:
        return Action("anthropic", name, EventKind.MOVE, position=self.coordinate)


class Click(_Member):
    """A click at ``coordinate`` (or where the pointer is), holding the keys in ``text``."""

    coordinate: Coordinate | None = None
    text: str | None = None

    def to_action(self, name: str) -> Action:
        kind, button = CLICKS[name]
        return Action(
            "anthropic",
            name,
            kind,
            position=self.coordinate,
            button=button,  # type: ignore[arg-type]
            modifiers=_held(self.text, name),
        )


class Drag(_Member):
    """Press at ``start_coordinate``, move to ``coordinate``, release; holding ``text``."""

    start_coordinate: Coordinate
    coordinate: Coordinate
    text: str | None = None

    def to_action(self, name: str) -> Action:
        return Action(
            "anthropic",
            name,
            EventKind.DRAG,
            position=self.coordinate,
            start=self.start_coordinate,
            button="left",
            modifiers=_held(self.text, name),
        )


class Scroll(_Member):
    """``scroll_amount`` wheel clicks towards ``scroll_direction`` at ``coordinate``."""

    scroll_amount: int = Field(ge=1, le=MAX_WHEEL_CLICKS)
    scroll_direction: Literal["up", "down", "left", "right"]
    coordinate: Coordinate | None = None
    text: str | None = None

    def to_action(self, name: str) -> Action:
        dx, dy = SCROLL_DIRECTIONS[self.scroll_direction]
        amount = self.scroll_amount
        return Action(
            "anthropic",
            name,
            EventKind.SCROLL,
            position=self.coordinate,
            wheel=(dx * amount, dy * amount),
            modifiers=_held(self.text, name),
        )


class Wait(_Member):
    """Wait ``duration`` seconds, then look."""

    duration: int = Field(ge=0, le=MAX_DURATION_S)

    def to_action(self, name: str) -> Action:
        return Action("anthropic", name, EventKind.WAIT, duration_s=float(self.duration))


class Zoom(_Member):
    """Look at ``region`` ``[x0, y0, x1, y1]`` (screenshot pixels) at the screen's resolution."""

    region: tuple[int, int, int, int]

    def to_action(self, name: str) -> Action:
        return Action(
            "anthropic", name, EventKind.SCREENSHOT, region=self.region, observation="zoom"
        )


#: Every member, with the model that reads its input.
MODELS: dict[str, type[_Member]] = {
    "key": Key,
    "hold_key": HoldKey,
    "type": TypeText,
    "cursor_position": NoFields,
    "mouse_move": MouseMove,
    "left_mouse_down": NoFields,
    "left_mouse_up": NoFields,
    **dict.fromkeys(CLICKS, Click),
    "left_click_drag": Drag,
    "scroll": Scroll,
    "wait": Wait,
    "screenshot": NoFields,
    "zoom": Zoom,
}
assert set(MODELS) == set(MEMBERS), "every member has a model"


def parse_member(name: object, data: object) -> Action:
    """Read one member call (its ``name`` and ``input``) into an Action;
    :class:`~viewfinder.desktop.actions.ActionInputError` naming the member and field
    when it cannot be read. Fields set to null count as absent."""
    if not isinstance(name, str) or name not in MODELS:
        raise ActionInputError(
            "name", f"{name!r:.60} is not a member of the computer toolset", ", ".join(MEMBERS)
        )
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ActionInputError(
            "input", f"must be a JSON object, got {type(data).__name__}", action=name
        )
    model = MODELS[name]
    present: dict[str, Any] = {key: value for key, value in data.items() if value is not None}
    parsed = validate_model(model, present, name, takes(model))
    return parsed.to_action(name)
