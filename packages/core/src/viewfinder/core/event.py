"""The Event model: one action by a person or an agent on a screen.

An Event maps both ways to the input of Anthropic's computer-use tool
(``{"action": "left_click", "coordinate": [x, y]}``) and to the lines of a recorder's
``manifest.jsonl``.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from viewfinder.core.element import ElementAnchor
from viewfinder.core.errors import EventFormatError
from viewfinder.core.geometry import Point
from viewfinder.core.screenshot import _as_utc, utc_now


class EventKind(StrEnum):
    """What kind of action an Event is."""

    CLICK = "click"
    DOUBLE_CLICK = "double_click"
    TRIPLE_CLICK = "triple_click"
    RIGHT_CLICK = "right_click"
    MIDDLE_CLICK = "middle_click"
    MOUSE_DOWN = "mouse_down"
    MOUSE_UP = "mouse_up"
    MOVE = "move"
    DRAG = "drag"
    SCROLL = "scroll"
    KEY = "key"
    HOLD_KEY = "hold_key"
    TYPE = "type"
    WAIT = "wait"
    SCREENSHOT = "screenshot"


#: Kinds that act at a screen position and so have a region worth hashing.
POINTER_KINDS = frozenset(
    {
        EventKind.CLICK,
        EventKind.DOUBLE_CLICK,
        EventKind.TRIPLE_CLICK,
        EventKind.RIGHT_CLICK,
        EventKind.MIDDLE_CLICK,
        EventKind.MOUSE_DOWN,
        EventKind.MOUSE_UP,
        EventKind.MOVE,
        EventKind.DRAG,
        EventKind.SCROLL,
    }
)
_NEEDS_POSITION = POINTER_KINDS - {EventKind.MOUSE_DOWN, EventKind.MOUSE_UP}

# computer-use action name <-> event kind, for the kinds that map one to one.
_CU_POINTER = {
    "left_click": EventKind.CLICK,
    "double_click": EventKind.DOUBLE_CLICK,
    "triple_click": EventKind.TRIPLE_CLICK,
    "right_click": EventKind.RIGHT_CLICK,
    "middle_click": EventKind.MIDDLE_CLICK,
    "mouse_move": EventKind.MOVE,
}
_CU_POINTER_BACK = {kind: action for action, kind in _CU_POINTER.items()}
_CLICK_BUTTONS = {
    EventKind.CLICK: "left",
    EventKind.DOUBLE_CLICK: "left",
    EventKind.TRIPLE_CLICK: "left",
    EventKind.RIGHT_CLICK: "right",
    EventKind.MIDDLE_CLICK: "middle",
}
_SCROLL_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}

Button = Literal["left", "right", "middle"]


class Event(BaseModel):
    """One action: where, what, when, and which frame showed the screen just before it.

    ``keys`` is one key chord in X keysym-style names (``["ctrl", "s"]``, ``["Return"]``);
    ``modifiers`` are keys held during a pointer action; ``scroll_dx``/``scroll_dy`` count
    wheel clicks (positive is right/down); ``screenshot`` references the pre-action
    frame (a path relative to a session folder, or any id the producer chose).
    ``element`` is the element under a pointer action's point, where a source could
    read one (:class:`~viewfinder.core.ElementAnchor`: role, name, path, box).
    ``window`` names the application whose window was in front at that point, as the
    window names it (X's ``WM_CLASS``, ``"tk_form/Tk"``), where the recorder could ask:
    a replay acts there only if the same application's window is in front again.
    """

    model_config = ConfigDict(extra="forbid", use_enum_values=False)

    kind: EventKind
    position: Point | None = None
    start_position: Point | None = None
    button: Button | None = None
    text: str | None = None
    keys: list[str] = Field(default_factory=list)
    modifiers: list[str] = Field(default_factory=list)
    scroll_dx: int = 0
    scroll_dy: int = 0
    duration_s: float | None = Field(default=None, ge=0)
    timestamp: datetime = Field(default_factory=utc_now)
    screenshot: str | None = None
    element: ElementAnchor | None = None
    window: str | None = Field(default=None, max_length=200)

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return _as_utc(value)

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> Event:
        kind = self.kind
        if kind in _NEEDS_POSITION and self.position is None:
            raise ValueError(f"a {kind.value} event needs a position")
        if kind is EventKind.DRAG and self.start_position is None:
            raise ValueError("a drag event needs start_position and position")
        if kind is EventKind.TYPE and not self.text:
            raise ValueError("a type event needs non-empty text")
        if kind in (EventKind.KEY, EventKind.HOLD_KEY) and not self.keys:
            raise ValueError(f"a {kind.value} event needs keys")
        if kind is EventKind.SCROLL and not (self.scroll_dx or self.scroll_dy):
            raise ValueError("a scroll event needs a non-zero scroll_dx or scroll_dy")
        if self.button is None and kind in _CLICK_BUTTONS:
            object.__setattr__(self, "button", _CLICK_BUTTONS[kind])
        return self

    @property
    def is_pointer(self) -> bool:
        return self.kind in POINTER_KINDS

    # -- Anthropic computer-use tool input -------------------------------------

    def to_computer_use(self) -> dict[str, Any]:
        """The equivalent input of Anthropic's computer-use tool."""
        kind = self.kind
        if kind in _CU_POINTER_BACK:
            out: dict[str, Any] = {
                "action": _CU_POINTER_BACK[kind],
                "coordinate": _xy(self.position),
            }
            if self.modifiers:
                out["text"] = "+".join(self.modifiers)
            return out
        if kind is EventKind.DRAG:
            return {
                "action": "left_click_drag",
                "start_coordinate": _xy(self.start_position),
                "coordinate": _xy(self.position),
            }
        if kind in (EventKind.MOUSE_DOWN, EventKind.MOUSE_UP):
            return {
                "action": "left_mouse_down" if kind is EventKind.MOUSE_DOWN else "left_mouse_up"
            }
        if kind is EventKind.SCROLL:
            if self.scroll_dx and self.scroll_dy:
                raise EventFormatError(
                    "computer-use scrolls go one way at a time; split this event into a "
                    "horizontal and a vertical scroll"
                )
            if self.scroll_dy:
                direction, amount = ("down" if self.scroll_dy > 0 else "up"), abs(self.scroll_dy)
            else:
                direction, amount = ("right" if self.scroll_dx > 0 else "left"), abs(self.scroll_dx)
            out = {
                "action": "scroll",
                "coordinate": _xy(self.position),
                "scroll_direction": direction,
                "scroll_amount": amount,
            }
            if self.modifiers:
                out["text"] = "+".join(self.modifiers)
            return out
        if kind is EventKind.KEY:
            return {"action": "key", "text": "+".join(self.keys)}
        if kind is EventKind.HOLD_KEY:
            return {"action": "hold_key", "text": "+".join(self.keys), "duration": self.duration_s}
        if kind is EventKind.TYPE:
            return {"action": "type", "text": self.text}
        if kind is EventKind.WAIT:
            return {"action": "wait", "duration": self.duration_s or 0}
        return {"action": "screenshot"}

    @classmethod
    def from_computer_use(cls, tool_input: dict[str, Any], **extra: Any) -> Event:
        """Read an Anthropic computer-use tool input; ``extra`` sets timestamp, screenshot, ..."""
        if not isinstance(tool_input, dict) or "action" not in tool_input:
            raise EventFormatError(
                f"computer-use input must be an object with an 'action', got {tool_input!r}"
            )
        action = tool_input["action"]
        try:
            fields = _fields_from_computer_use(action, tool_input)
            return cls(**fields, **extra)
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            if isinstance(exc, EventFormatError):
                raise
            raise EventFormatError(f"cannot read computer-use action {action!r}: {exc}") from exc

    # -- manifest lines ----------------------------------------------------------

    def to_manifest(self, seq: int) -> dict[str, Any]:
        """The recorder's ``manifest.jsonl`` line for this event (as a dict)."""
        body = self.model_dump(mode="json", exclude_defaults=True)
        body["kind"] = self.kind.value
        body["timestamp"] = self.model_dump(mode="json")["timestamp"]
        return {"seq": seq, **body}

    @classmethod
    def from_manifest(cls, line: dict[str, Any]) -> Event:
        """Read one ``manifest.jsonl`` line (the ``seq`` number is not part of the Event).

        Keys an Event does not have are ignored, so lines written by a newer recorder
        with more to say stay readable.
        """
        body = {key: value for key, value in line.items() if key in cls.model_fields}
        try:
            return cls.model_validate(body)
        except ValidationError as exc:
            raise EventFormatError(f"invalid manifest line {line!r}: {exc}") from exc


def _xy(point: Point | None) -> list[int]:
    assert point is not None  # guaranteed by the model validator
    return [point.x, point.y]


def _point(value: Any, name: str) -> Point:
    if not (isinstance(value, list | tuple) and len(value) == 2):
        raise EventFormatError(f"{name} must be [x, y], got {value!r}")
    return Point(x=int(value[0]), y=int(value[1]))


def _split_keys(text: Any) -> list[str]:
    if not isinstance(text, str) or not text.strip():
        raise EventFormatError(
            f"key text must be a non-empty string such as 'ctrl+s', got {text!r}"
        )
    return [part for part in text.strip().split("+") if part] or ["+"]


def _fields_from_computer_use(action: str, data: dict[str, Any]) -> dict[str, Any]:
    if action in _CU_POINTER:
        fields: dict[str, Any] = {
            "kind": _CU_POINTER[action],
            "position": _point(data.get("coordinate"), "coordinate"),
        }
        if data.get("text"):
            fields["modifiers"] = _split_keys(data["text"])
        return fields
    if action == "left_click_drag":
        return {
            "kind": EventKind.DRAG,
            "start_position": _point(data.get("start_coordinate"), "start_coordinate"),
            "position": _point(data.get("coordinate"), "coordinate"),
        }
    if action in ("left_mouse_down", "left_mouse_up"):
        kind = EventKind.MOUSE_DOWN if action == "left_mouse_down" else EventKind.MOUSE_UP
        fields = {"kind": kind, "button": "left"}
        if data.get("coordinate") is not None:
            fields["position"] = _point(data["coordinate"], "coordinate")
        return fields
    if action == "scroll":
        direction = data.get("scroll_direction")
        if direction not in _SCROLL_DIRECTIONS:
            raise EventFormatError(
                f"scroll_direction must be up, down, left or right, got {direction!r}"
            )
        amount = int(data.get("scroll_amount", 1))
        dx, dy = _SCROLL_DIRECTIONS[direction]
        fields = {
            "kind": EventKind.SCROLL,
            "position": _point(data.get("coordinate"), "coordinate"),
            "scroll_dx": dx * amount,
            "scroll_dy": dy * amount,
        }
        if data.get("text"):
            fields["modifiers"] = _split_keys(data["text"])
        return fields
    if action == "key":
        return {"kind": EventKind.KEY, "keys": _split_keys(data.get("text"))}
    if action == "hold_key":
        return {
            "kind": EventKind.HOLD_KEY,
            "keys": _split_keys(data.get("text")),
            "duration_s": float(data.get("duration", 0)),
        }
    if action == "type":
        return {"kind": EventKind.TYPE, "text": data.get("text")}
    if action == "wait":
        return {"kind": EventKind.WAIT, "duration_s": float(data.get("duration", 0))}
    if action in ("screenshot", "cursor_position"):
        return {"kind": EventKind.SCREENSHOT}
    raise EventFormatError(
        f"unknown computer-use action {action!r}; known: "
        + ", ".join(
            sorted(
                [
                    *_CU_POINTER,
                    "left_click_drag",
                    "left_mouse_down",
                    "left_mouse_up",
                    "scroll",
                    "key",
                    "hold_key",
                    "type",
                    "wait",
                    "screenshot",
                ]
            )
        )
    )
