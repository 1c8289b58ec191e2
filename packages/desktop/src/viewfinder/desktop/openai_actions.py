"""OpenAI's computer-use actions (the ``action`` of a ``computer_call``), one model each.

``click`` (``button``: left, right, wheel, back, forward), ``double_click``, ``scroll``
(``scroll_x`` / ``scroll_y`` in pixels), ``keypress`` (``keys``, pressed together),
``type``, ``wait``, ``move``, ``drag`` (``path`` of ``{x, y}`` points), ``screenshot``.
``x``, ``y`` and the path are the model's pixels. Pointer actions also take ``keys``,
modifier keys held while they happen. ``click``, ``double_click``, ``scroll``, ``move``
and ``type`` take ``element`` (a ref such as ``e12``) instead of ``x`` and ``y``: they
act at the element's centre (``type`` clicks it first).

Key names are names, in any case: ``["CTRL", "A"]`` is Control and the A key, never
Shift as well (a letter names its key, not a capital); ``ENTER``, ``ARROWLEFT``,
``PAGEDOWN``, ``NUMLOCK``, ``CMD``, ``OPTION`` and X keysym names are read as on the X
keyboard.

How the ones without an X equivalent are carried out:

- ``scroll``: X scrolls in wheel clicks, so the distance (scaled to the screen) becomes
  one click per :data:`~viewfinder.desktop.actions.SCREEN_PIXELS_PER_WHEEL_CLICK` screen
  pixels, rounded, at least one click for any distance that is not 0.
- ``click`` with ``back`` / ``forward``: the ``XF86Back`` / ``XF86Forward`` keys, which
  browsers and file managers bind to going back and forward (what those mouse buttons
  do there); ``wheel`` is the middle button.
- ``wait``: :data:`WAIT_S` seconds (the action has no duration).
- ``drag``: the left button is pressed at the first point, the pointer moves through
  every point with the button held, and is released at the last.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core.event import EventKind
from viewfinder.desktop.actions import (
    MAX_SCROLL_PIXELS,
    Action,
    ActionInputError,
    check_keys,
    check_text,
    element_of,
    validate_model,
)
from viewfinder.desktop.anthropic_actions import takes

#: How long ``wait`` waits, in seconds (as OpenAI's sample computers do).
WAIT_S = 1.0
#: The keys sent for the ``back`` and ``forward`` buttons (python-xlib's keysym names).
HISTORY_KEYS = {"back": "XF86_Back", "forward": "XF86_Forward"}
_BUTTONS = {
    "left": (EventKind.CLICK, "left"),
    "right": (EventKind.RIGHT_CLICK, "right"),
    "wheel": (EventKind.MIDDLE_CLICK, "middle"),
}


def key_names(keys: list[str], action: str) -> tuple[str, ...]:
    """OpenAI's key names, checked: a letter names its key in either case (OpenAI writes
    ``"A"`` for the A key, which as an X keysym would be the capital, with Shift)."""
    names = [
        name.lower() if isinstance(name, str) and len(name) == 1 and name.isalpha() else name
        for name in keys
    ]
    return check_keys(names, "keys", action, indexed=True)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str

    def to_action(self) -> Action:
        raise NotImplementedError


class _Pointer(_Input):
    x: int | None = None
    y: int | None = None
    element: str | None = None
    keys: list[str] | None = None

    def _modifiers(self) -> tuple[str, ...]:
        return key_names(self.keys, self.type) if self.keys else ()

    def _place(self) -> dict[str, Any]:
        """``position`` (x, y) or ``element``, exactly one of them, as Action fields."""
        given = None if self.x is None and self.y is None else (self.x, self.y)
        element = element_of(self.element, given, self.type, "x, y")
        if element is not None:
            return {"element": element, "position_field": "x, y"}
        if self.x is None or self.y is None:
            missing = "x" if self.x is None else "y"
            raise ActionInputError(
                missing, "is required", "x and y (pixels), or element", action=self.type
            )
        return {"position": (self.x, self.y), "position_field": "x, y"}


class Click(_Pointer):
    """Click ``button`` at ``(x, y)``."""

    button: Literal["left", "right", "wheel", "back", "forward"] = "left"

    def to_action(self) -> Action:
        place = self._place()
        if self.button in HISTORY_KEYS:
            if "element" in place:
                raise ActionInputError(
                    "element",
                    f"a {self.button} click presses a key and acts on no element",
                    "x and y",
                    action=self.type,
                )
            return Action(
                "openai",
                self.type,
                EventKind.KEY,
                keys=(HISTORY_KEYS[self.button],),
                **place,  # checked on the screen; keys need no place
            )
        kind, button = _BUTTONS[self.button]
        return Action(
            "openai",
            self.type,
            kind,
            button=button,  # type: ignore[arg-type]
            modifiers=self._modifiers(),
            **place,
        )


class DoubleClick(_Pointer):
    """Double-click the left button at ``(x, y)``."""

    def to_action(self) -> Action:
        return Action(
            "openai",
            self.type,
            EventKind.DOUBLE_CLICK,
            button="left",
            modifiers=self._modifiers(),
            **self._place(),
        )


class Move(_Pointer):
    """Move the pointer to ``(x, y)``."""

    def to_action(self) -> Action:
        return Action(
            "openai",
            self.type,
            EventKind.MOVE,
            modifiers=self._modifiers(),
            **self._place(),
        )


class Scroll(_Pointer):
    """Scroll by ``scroll_x`` / ``scroll_y`` pixels (positive: right / down) at ``(x, y)``."""

    scroll_x: int = Field(default=0, ge=-MAX_SCROLL_PIXELS, le=MAX_SCROLL_PIXELS)
    scroll_y: int = Field(default=0, ge=-MAX_SCROLL_PIXELS, le=MAX_SCROLL_PIXELS)

    def to_action(self) -> Action:
        if not (self.scroll_x or self.scroll_y):
            raise ActionInputError(
                "scroll_x, scroll_y",
                "are both 0, so there is nothing to scroll",
                "pixels to scroll, positive right / down, negative left / up",
                action=self.type,
            )
        return Action(
            "openai",
            self.type,
            EventKind.SCROLL,
            scroll_pixels=(self.scroll_x, self.scroll_y),
            modifiers=self._modifiers(),
            **self._place(),
        )


class PathPoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    x: int
    y: int


class Drag(_Input):
    """Press at the path's first point, move through every point, release at the last."""

    path: list[PathPoint] = Field(min_length=2)
    keys: list[str] | None = None

    def to_action(self) -> Action:
        modifiers = key_names(self.keys, self.type) if self.keys else ()
        return Action(
            "openai",
            self.type,
            EventKind.DRAG,
            path=tuple((point.x, point.y) for point in self.path),
            button="left",
            modifiers=modifiers,
        )


class KeyPress(_Input):
    """Press ``keys`` together as one chord (``["CTRL", "C"]``, ``["ENTER"]``)."""

    keys: list[str] = Field(min_length=1)

    def to_action(self) -> Action:
        return Action("openai", self.type, EventKind.KEY, keys=key_names(self.keys, self.type))


class TypeText(_Input):
    """Type ``text`` (into ``element``, clicked first, when given)."""

    text: str
    element: str | None = None

    def to_action(self) -> Action:
        return Action(
            "openai",
            self.type,
            EventKind.TYPE,
            text=check_text(self.text, "text", self.type),
            element=element_of(self.element, None, self.type),
        )


class Wait(_Input):
    """Wait :data:`WAIT_S` seconds, then look."""

    def to_action(self) -> Action:
        return Action("openai", self.type, EventKind.WAIT, duration_s=WAIT_S)


class Screenshot(_Input):
    """Look, do nothing."""

    def to_action(self) -> Action:
        return Action("openai", self.type, EventKind.SCREENSHOT, observation="screenshot")


#: Every action type, with the model that reads it.
MODELS: dict[str, type[_Input]] = {
    "click": Click,
    "double_click": DoubleClick,
    "move": Move,
    "scroll": Scroll,
    "drag": Drag,
    "keypress": KeyPress,
    "type": TypeText,
    "wait": Wait,
    "screenshot": Screenshot,
}


def parse(data: Mapping[str, Any]) -> Action:
    """Read one OpenAI computer-use action; :class:`ActionInputError` when it cannot be."""
    name = data.get("type")
    if not isinstance(name, str) or name not in MODELS:
        raise ActionInputError("type", f"unknown action type {name!r}", ", ".join(sorted(MODELS)))
    model = MODELS[name]
    present = {key: value for key, value in data.items() if value is not None}
    parsed = validate_model(model, present, name, takes(model))
    return parsed.to_action()
