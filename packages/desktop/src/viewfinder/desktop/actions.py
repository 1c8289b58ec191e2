"""Computer-use actions as models send them, read into one shape.

:func:`parse_action` reads one action of Anthropic's computer-use tool (``{"action":
"left_click", "coordinate": [x, y]}``, versions ``computer_20250124`` and
``computer_20251124``) or of OpenAI's (``{"type": "click", "button": "left", "x": 10,
"y": 20}``) into an :class:`Action`, in the model's coordinates. Which API an input
follows is told by its keys (``action`` or ``type``) unless ``api`` says it.

An input that cannot be read raises :class:`ActionInputError`, whose message names the
field, says what was wrong and what is allowed, in words a model can act on. Each
action is checked by a pydantic model of its own (:mod:`~viewfinder.desktop.anthropic_actions`,
:mod:`~viewfinder.desktop.openai_actions`); key names and typed characters are checked
here against what the X keyboard can send, before anything is pressed.

Either API's pointer actions and ``type`` may name an element instead of a point
(``{"action": "left_click", "element": "e12"}``: a ref from the elements listed with an
earlier screenshot); the tool acts at the element's centre as it is then. And every
action may ask for the elements on the screen with its result (``"elements": true``)
and for the screenshot with numbered boxes drawn on them (``"set_of_mark": true``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from viewfinder.core.errors import ActionError, ViewfinderError
from viewfinder.core.event import Event, EventKind
from viewfinder.core.geometry import Point, Region

if TYPE_CHECKING:
    from viewfinder.desktop.scaling import Scaling

Api = Literal["anthropic", "openai"]
APIS: tuple[Api, ...] = ("anthropic", "openai")
Observation = Literal["screenshot", "zoom", "cursor_position"]

#: Screen pixels one wheel click stands for, when an OpenAI ``scroll`` gives pixels
#: (most toolkits move about 50-120 px per click; Tk's list moves 5 rows of ~20 px).
SCREEN_PIXELS_PER_WHEEL_CLICK = 100
#: Longest ``wait`` or ``hold_key`` accepted, in seconds (as Anthropic's reference).
MAX_DURATION_S = 100.0
#: Most presses one ``key`` action with ``repeat`` may send.
MAX_KEY_REPEAT = 100
#: Most wheel clicks one scroll may send.
MAX_WHEEL_CLICKS = 200
#: Longest OpenAI ``scroll_x`` / ``scroll_y``, in pixels (what the wheel clicks cover).
MAX_SCROLL_PIXELS = MAX_WHEEL_CLICKS * SCREEN_PIXELS_PER_WHEEL_CLICK
#: Longest text one ``type`` action types, in characters (typing takes time linear in
#: it; an app takes a few seconds for this many).
MAX_TEXT_CHARS = 100_000
#: What an element ref looks like (``e12``).
ELEMENT_REF = re.compile(r"e[1-9][0-9]{0,8}")
#: The keys any action may carry besides its own fields: what to return with it.
RESULT_OPTIONS = ("elements", "set_of_mark")

_NEEDS_POSITION = {
    EventKind.CLICK,
    EventKind.DOUBLE_CLICK,
    EventKind.TRIPLE_CLICK,
    EventKind.RIGHT_CLICK,
    EventKind.MIDDLE_CLICK,
    EventKind.MOVE,
    EventKind.SCROLL,
}


class ActionInputError(ViewfinderError, ValueError):
    """A computer-use action that cannot be read or performed as given.

    ``field`` names the offending field (``coordinate``, ``path[2].x``, ``text``),
    ``problem`` says what is wrong with it and ``allowed`` what would be accepted;
    ``action`` is the action's name when it is known. The message joins them in words
    a model can act on; ComputerTool hands it back as a tool error, never raises it.
    """

    def __init__(
        self,
        field: str | None,
        problem: str,
        allowed: str | None = None,
        *,
        action: str | None = None,
    ) -> None:
        self.field = field
        self.problem = problem
        self.allowed = allowed
        self.action = action
        super().__init__(problem)

    def __str__(self) -> str:
        text = f"{self.field}: {self.problem}" if self.field else self.problem
        if self.allowed:
            text += f"; allowed: {self.allowed}"
        return f"{self.action}: {text}" if self.action else text


class CoordinateRangeError(ActionInputError):
    """A point or box that is not on the screen the model sees."""


@dataclass(frozen=True)
class Action:
    """One computer-use action, read and checked, in the model's coordinates.

    ``name`` is the action's name in its API (``left_click``, ``click``); ``kind`` what
    it does as a :class:`~viewfinder.core.EventKind`. Positions are model pixels;
    ``position`` None on a click or scroll means where the pointer is. ``wheel`` counts
    wheel clicks (Anthropic); ``scroll_pixels`` are model pixels (OpenAI), turned into
    wheel clicks on the screen by :meth:`to_event`. ``observation`` marks the actions
    that only look (screenshot, zoom, cursor_position): they never wait for the screen.
    ``element``: the ref of the element to act on instead of a point. ``elements``: the
    result should carry the elements on the screen (None: as the tool's option says);
    ``set_of_mark``: and the screenshot with their numbered boxes drawn on it.
    ``repeat``: how many times a key chord is pressed (Anthropic's toolset ``key``).
    """

    api: Api
    name: str
    kind: EventKind
    position: tuple[int, int] | None = None
    position_field: str = "coordinate"
    start: tuple[int, int] | None = None
    path: tuple[tuple[int, int], ...] = ()
    button: Literal["left", "right", "middle"] | None = None
    keys: tuple[str, ...] = ()
    modifiers: tuple[str, ...] = ()
    text: str | None = None
    wheel: tuple[int, int] = (0, 0)
    scroll_pixels: tuple[int, int] = (0, 0)
    duration_s: float | None = None
    region: tuple[int, int, int, int] | None = None
    observation: Observation | None = None
    element: str | None = None
    elements: bool | None = None
    set_of_mark: bool = False
    repeat: int = 1

    @property
    def changes_screen(self) -> bool:
        """False for the actions that only look; the screen is not waited for after them."""
        return self.observation is None

    def to_event(
        self, scaling: Scaling, pointer: tuple[int, int], at: tuple[int, int] | None = None
    ) -> Event:
        """The action as a core Event in SCREEN coordinates.

        ``pointer`` (screen) is used where the action names no position; ``at`` (screen)
        is where an action on an element acts (its centre). Raises
        :class:`CoordinateRangeError` for a point off the model's image.
        """
        fields: dict[str, Any] = {"kind": self.kind}
        if at is not None:
            fields["position"] = _point(at)
        elif self.position is not None:
            fields["position"] = _point(
                scaling.to_screen(*self.position, field=self.position_field)
            )
        elif self.kind in _NEEDS_POSITION:
            fields["position"] = _point(pointer)
        if self.start is not None:
            fields["start_position"] = _point(
                scaling.to_screen(*self.start, field="start_coordinate")
            )
        if self.path:
            screen = self.screen_path(scaling)
            fields["start_position"], fields["position"] = _point(screen[0]), _point(screen[-1])
        if self.button is not None:
            fields["button"] = self.button
        if self.keys:
            fields["keys"] = list(self.keys)
        if self.modifiers:
            fields["modifiers"] = list(self.modifiers)
        if self.text is not None:
            fields["text"] = self.text
        if self.duration_s is not None:
            fields["duration_s"] = self.duration_s
        if self.kind is EventKind.SCROLL:
            dx, dy = self.wheel if self.api == "anthropic" else self._wheel_clicks(scaling)
            fields["scroll_dx"], fields["scroll_dy"] = dx, dy
        return Event(**fields)

    def screen_path(self, scaling: Scaling) -> list[tuple[int, int]]:
        """A drag's path (OpenAI) in screen coordinates."""
        return [
            scaling.to_screen(x, y, field=f"path[{index}]")
            for index, (x, y) in enumerate(self.path)
        ]

    def screen_region(self, scaling: Scaling) -> Region | None:
        """A zoom's region in screen coordinates (None for other actions)."""
        return scaling.box_to_screen(self.region) if self.region is not None else None

    def _wheel_clicks(self, scaling: Scaling) -> tuple[int, int]:
        screen_dx, screen_dy = scaling.screen_distance(*self.scroll_pixels)
        return (wheel_clicks(screen_dx), wheel_clicks(screen_dy))


def wheel_clicks(screen_pixels: float) -> int:
    """Wheel clicks for a scroll of ``screen_pixels`` (sign kept; at least one when not 0).

    One click stands for :data:`SCREEN_PIXELS_PER_WHEEL_CLICK` pixels, rounded to the
    nearest click, and at most :data:`MAX_WHEEL_CLICKS`.
    """
    if not screen_pixels:
        return 0
    clicks = max(
        1, min(MAX_WHEEL_CLICKS, round(abs(screen_pixels) / SCREEN_PIXELS_PER_WHEEL_CLICK))
    )
    return int(math.copysign(clicks, screen_pixels))


def detect_api(data: Mapping[str, Any]) -> Api:
    """Which API an action follows, by its keys: ``action`` (Anthropic) or ``type`` (OpenAI)."""
    has_action, has_type = "action" in data, "type" in data
    if has_action and not has_type:
        return "anthropic"
    if has_type and not has_action:
        return "openai"
    raise ActionInputError(
        None,
        "cannot tell which computer-use API this action follows"
        + (
            " (it has both 'action' and 'type')"
            if has_action
            else " (it has neither 'action' nor 'type')"
        ),
        'an object with \'action\' (Anthropic computer use, e.g. {"action": "left_click", '
        "\"coordinate\": [100, 200]}) or with 'type' (OpenAI computer use, e.g. "
        '{"type": "click", "button": "left", "x": 100, "y": 200})',
    )


def action_name(data: object) -> str | None:
    """The name of the action ``data`` holds, if it has one (for messages about it)."""
    if not isinstance(data, Mapping):
        return None
    name = data.get("action") if "action" in data else data.get("type")
    if isinstance(name, Mapping):  # an OpenAI computer_call item
        name = name.get("type")
    return name if isinstance(name, str) else None


def parse_action(data: Any, api: Api | None = None) -> Action:
    """Read one computer-use action (see the module docstring); :class:`ActionInputError`
    when it cannot be read.

    An OpenAI ``computer_call`` output item (``{"type": "computer_call", "action": {...}}``)
    is read as the action it carries.
    """
    if api is not None and api not in APIS:
        raise ActionInputError("api", f"unknown API {api!r}", "anthropic, openai or None")
    if not isinstance(data, Mapping):
        raise ActionInputError(
            None, f"an action must be a JSON object, got {type(data).__name__}: {data!r:.80}"
        )
    if data.get("type") == "computer_call" and isinstance(data.get("action"), Mapping):
        data, api = data["action"], "openai"
    chosen = api or detect_api(data)
    from viewfinder.desktop import anthropic_actions, openai_actions

    module = anthropic_actions if chosen == "anthropic" else openai_actions
    options = {key: data[key] for key in RESULT_OPTIONS if data.get(key) is not None}
    action = module.parse({key: value for key, value in data.items() if key not in options})
    for key, value in options.items():
        if not isinstance(value, bool):
            raise ActionInputError(
                key,
                f"must be true or false, got {value!r:.40}",
                "true or false",
                action=action.name,
            )
    return replace(action, **options) if options else action


# -- helpers for the per-API models -------------------------------------------------------


def validate_model(model: type[BaseModel], data: Mapping[str, Any], action: str, takes: str) -> Any:
    """``model.model_validate(data)``, with a validation failure as an
    :class:`ActionInputError` naming each bad field; ``takes`` lists the action's fields."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        problems = [_problem(error, action) for error in exc.errors()]
        (field, problem), rest = problems[0], problems[1:]
        if rest:
            problem += "; " + "; ".join(f"{f}: {p}" if f else p for f, p in rest)
        raise ActionInputError(field, problem, takes, action=action) from None


def _problem(error: Any, action: str) -> tuple[str | None, str]:
    loc = list(error["loc"])
    kind = error["type"]
    if kind == "missing" and len(loc) > 1 and isinstance(loc[-1], int):
        # an item missing from [x, y] or a region: the field as a whole is too short
        loc, kind = loc[:-1], "too_short"
        error = {**error, "msg": "has too few items"}
    location = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    location = location.lstrip(".")
    if kind == "extra_forbidden":
        return (location, f"is not a field of {action}")
    if kind == "missing":
        return (location, "is required")
    message = str(error["msg"])
    value = error.get("input")
    shown = f" (got {value!r:.60})" if not isinstance(value, dict) else ""
    return (location or None, message[0].lower() + message[1:] + shown)


def chord(text: Any, field: str, action: str) -> tuple[str, ...]:
    """A key chord (``"ctrl+s"``, ``"ctrl++"``) as key names, each checked against the X
    keyboard."""
    from viewfinder.xvfb.keys import KEY_NAMING_HELP, split_chord

    if not isinstance(text, str) or not text.strip():
        if text == " ":
            return ("space",)
        raise ActionInputError(
            field, f"must name a key or chord, got {text!r}", KEY_NAMING_HELP, action=action
        )
    cleaned = text.strip()
    if len(cleaned.split()) > 1:
        raise ActionInputError(
            field,
            f"{cleaned!r} holds several chords; one action presses one chord",
            "one chord such as 'ctrl+s' or 'Return' (send one action per chord)",
            action=action,
        )
    try:
        names = tuple(split_chord(cleaned))
    except ActionError as exc:
        raise ActionInputError(
            field, str(exc).split(";")[0], KEY_NAMING_HELP, action=action
        ) from None
    return check_keys(names, field, action)


def check_keys(
    names: tuple[str, ...] | list[str], field: str, action: str, *, indexed: bool = False
) -> tuple[str, ...]:
    """Check every key name against the X keyboard; :class:`ActionInputError` naming it
    (as ``field[i]`` when ``indexed``, for a list of keys)."""
    from viewfinder.xvfb.keys import KEY_NAMING_HELP, keysym_for_name

    for index, name in enumerate(names):
        where = f"{field}[{index}]" if indexed else field
        if not isinstance(name, str):
            raise ActionInputError(
                where, f"must be a key name, got {name!r}", KEY_NAMING_HELP, action=action
            )
        try:
            keysym_for_name(name)
        except ActionError:
            raise ActionInputError(
                where, f"unknown key {name!r}", KEY_NAMING_HELP, action=action
            ) from None
    return tuple(names)


def check_text(text: str, field: str, action: str) -> str:
    """Text to type: non-empty, at most :data:`MAX_TEXT_CHARS` characters, every one
    a character the keyboard can type."""
    from viewfinder.xvfb.keys import keysym_for_char

    if not text:
        raise ActionInputError(field, "must not be empty", "the text to type", action=action)
    if len(text) > MAX_TEXT_CHARS:
        raise ActionInputError(
            field,
            f"is {len(text)} characters long, over the limit of {MAX_TEXT_CHARS}",
            f"at most {MAX_TEXT_CHARS} characters; type a longer text in several actions",
            action=action,
        )
    for position, char in enumerate(text):
        try:
            keysym_for_char(char)
        except ActionError:
            raise ActionInputError(
                field,
                f"character {position} ({char!r}) is a control character that cannot be typed",
                "printable text, with \\n for Enter and \\t for Tab; send other control "
                "keys as a key action (e.g. ctrl+c)",
                action=action,
            ) from None
    return text


def element_of(
    ref: str | None, position: object, action: str, field: str = "coordinate"
) -> str | None:
    """The element ref an action names (None when it names none), checked: a ref such
    as ``e12``, and not together with a point (``field``)."""
    if ref is None:
        return None
    if not ELEMENT_REF.fullmatch(ref):
        raise ActionInputError(
            "element",
            f"{ref!r:.40} is not an element ref",
            "a ref such as 'e12', as the elements listed with a screenshot name them",
            action=action,
        )
    if position is not None:
        raise ActionInputError(
            "element",
            f"is given together with {field}; an action acts at one place",
            f"either element (the element's centre) or {field}, not both",
            action=action,
        )
    return ref


def _point(xy: tuple[int, int]) -> Point:
    return Point(x=xy[0], y=xy[1])
