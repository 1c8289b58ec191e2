"""Every Anthropic and OpenAI computer-use action read right, and refused in words that
name the field and what is allowed when it is malformed (performing them:
test_action_effects.py)."""

from __future__ import annotations

from typing import Any

import pytest

from viewfinder.core import EventKind
from viewfinder.desktop import (
    ActionInputError,
    Scaling,
    parse_action,
)
from viewfinder.desktop.actions import wheel_clicks

XGA = Scaling.choose(1920, 1080, "XGA")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"action": "left_click", "coordinate": [10, 20]},
            {"kind": EventKind.CLICK, "position": (10, 20)},
        ),
        (
            {"action": "right_click", "coordinate": [1, 2]},
            {"kind": EventKind.RIGHT_CLICK, "button": "right"},
        ),
        ({"action": "middle_click"}, {"kind": EventKind.MIDDLE_CLICK, "position": None}),
        (
            {"action": "double_click", "coordinate": [1, 2], "text": "shift"},
            {"modifiers": ("shift",)},
        ),
        ({"action": "triple_click", "coordinate": [1, 2]}, {"kind": EventKind.TRIPLE_CLICK}),
        (
            {"action": "mouse_move", "coordinate": [5, 6]},
            {"kind": EventKind.MOVE, "position": (5, 6)},
        ),
        ({"action": "left_mouse_down"}, {"kind": EventKind.MOUSE_DOWN, "position": None}),
        (
            {"action": "left_mouse_up", "coordinate": [3, 4]},
            {"kind": EventKind.MOUSE_UP, "position": (3, 4)},
        ),
        (
            {"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [30, 40]},
            {"kind": EventKind.DRAG, "start": (1, 2), "position": (30, 40)},
        ),
        (
            {
                "action": "scroll",
                "coordinate": [5, 5],
                "scroll_direction": "left",
                "scroll_amount": 3,
                "text": "ctrl",
            },
            {"kind": EventKind.SCROLL, "wheel": (-3, 0), "modifiers": ("ctrl",)},
        ),
        (
            {"action": "key", "text": "ctrl+shift+t"},
            {"kind": EventKind.KEY, "keys": ("ctrl", "shift", "t")},
        ),
        ({"action": "key", "text": "Return"}, {"keys": ("Return",)}),
        (
            {"action": "hold_key", "text": "shift", "duration": 0.5},
            {"kind": EventKind.HOLD_KEY, "duration_s": 0.5},
        ),
        ({"action": "type", "text": "Grüße\n"}, {"kind": EventKind.TYPE, "text": "Grüße\n"}),
        ({"action": "wait", "duration": 1.5}, {"kind": EventKind.WAIT, "duration_s": 1.5}),
        ({"action": "screenshot"}, {"observation": "screenshot", "changes_screen": False}),
        ({"action": "cursor_position"}, {"observation": "cursor_position"}),
        (
            {"action": "zoom", "region": [0, 0, 100, 50]},
            {"observation": "zoom", "region": (0, 0, 100, 50)},
        ),
        # fields set to null count as absent, as some SDKs send them
        ({"action": "screenshot", "coordinate": None, "text": None}, {"observation": "screenshot"}),
    ],
)
def test_anthropic_actions_are_read(data: dict[str, Any], expected: dict[str, Any]) -> None:
    action = parse_action(data)
    assert action.api == "anthropic"
    assert action.name == data["action"]
    for name, value in expected.items():
        assert getattr(action, name) == value, name


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"type": "click", "button": "left", "x": 1, "y": 2},
            {"kind": EventKind.CLICK, "position": (1, 2)},
        ),
        ({"type": "click", "button": "right", "x": 1, "y": 2}, {"kind": EventKind.RIGHT_CLICK}),
        ({"type": "click", "button": "wheel", "x": 1, "y": 2}, {"kind": EventKind.MIDDLE_CLICK}),
        (
            {"type": "click", "button": "back", "x": 1, "y": 2},
            {"kind": EventKind.KEY, "keys": ("XF86_Back",)},
        ),
        ({"type": "click", "button": "forward", "x": 1, "y": 2}, {"keys": ("XF86_Forward",)}),
        ({"type": "double_click", "x": 1, "y": 2}, {"kind": EventKind.DOUBLE_CLICK}),
        (
            {"type": "move", "x": 7, "y": 8, "keys": ["shift"]},
            {"kind": EventKind.MOVE, "modifiers": ("shift",)},
        ),
        (
            {"type": "scroll", "x": 1, "y": 2, "scroll_x": 0, "scroll_y": -250},
            {"kind": EventKind.SCROLL, "scroll_pixels": (0, -250)},
        ),
        (
            {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]},
            {"kind": EventKind.DRAG, "path": ((1, 2), (3, 4), (5, 6))},
        ),
        (
            {"type": "keypress", "keys": ["CTRL", "ALT", "T"]},  # a letter is its key, never Shift
            {"kind": EventKind.KEY, "keys": ("CTRL", "ALT", "t")},
        ),
        ({"type": "type", "text": "hi"}, {"kind": EventKind.TYPE, "text": "hi"}),
        ({"type": "wait"}, {"kind": EventKind.WAIT, "duration_s": 1.0}),
        ({"type": "screenshot"}, {"observation": "screenshot"}),
        # a whole computer_call output item is read as the action it carries
        (
            {"type": "computer_call", "call_id": "c1", "action": {"type": "move", "x": 1, "y": 1}},
            {"kind": EventKind.MOVE, "name": "move"},
        ),
    ],
)
def test_openai_actions_are_read(data: dict[str, Any], expected: dict[str, Any]) -> None:
    action = parse_action(data)
    assert action.api == "openai"
    for name, value in expected.items():
        assert getattr(action, name) == value, name


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"action": "explode"}, "action", "unknown action 'explode'; allowed: cursor_position,"),
        ({"type": "hover", "x": 1, "y": 1}, "type", "unknown action type 'hover'; allowed: click,"),
        (
            {"action": "left_click", "coordinate": [1]},
            "coordinate",
            "left_click: coordinate: has too few items (got [1]); "
            "allowed: fields coordinate [x, y] (optional)",
        ),
        ({"action": "left_click", "coordinate": [1.5, 2]}, "coordinate[0]", "fractional part"),
        (
            {"action": "left_click_drag", "coordinate": [1, 2]},
            "start_coordinate",
            "start_coordinate: is required",
        ),
        ({"action": "type"}, "text", "text: is required; allowed: fields text (required)"),
        ({"action": "type", "text": ""}, "text", "must not be empty"),
        (
            {"action": "type", "text": "a\x07b"},
            "text",
            "character 1 ('\\x07') is a control character",
        ),
        ({"action": "key", "text": "ctrl+banana"}, "text", "unknown key 'banana'"),
        ({"action": "key", "text": "ctrl+a Delete"}, "text", "holds several chords"),
        (
            {"action": "key", "text": "a", "coordinate": [1, 1]},
            "coordinate",
            "coordinate: is not a field of key",
        ),
        (
            {"action": "scroll", "scroll_direction": "sideways", "scroll_amount": 1},
            "scroll_direction",
            "'up', 'down', 'left' or 'right'",
        ),
        (
            {"action": "scroll", "scroll_direction": "up", "scroll_amount": 0},
            "scroll_amount",
            "greater than or equal to 1",
        ),
        ({"action": "wait", "duration": 1000}, "duration", "less than or equal to 100"),
        ({"action": "zoom", "region": [0, 0, 10]}, "region", "region"),
        (
            {"type": "click", "button": "thumb", "x": 1, "y": 2},
            "button",
            "'left', 'right', 'wheel', 'back' or 'forward'",
        ),
        ({"type": "keypress", "keys": ["ctrl", "nope"]}, "keys[1]", "unknown key 'nope'"),
        ({"type": "drag", "path": [{"x": 1, "y": 2}]}, "path", "at least 2 items"),
        (
            {"type": "drag", "path": [{"x": 1}, {"x": 2, "y": 3}]},
            "path[0].y",
            "path[0].y: is required",
        ),
        ({"type": "scroll", "x": 1, "y": 1}, "scroll_x, scroll_y", "nothing to scroll"),
        ({"type": "wait", "ms": 5}, "ms", "ms: is not a field of wait"),
        ({"action": "screenshot", "type": "screenshot"}, None, "both 'action' and 'type'"),
        ({"x": 1}, None, "neither 'action' nor 'type'"),
        (["left_click"], None, "an action must be a JSON object"),
    ],
)
def test_malformed_actions_name_the_field_and_what_is_allowed(
    data: Any, field: str | None, words: str
) -> None:
    with pytest.raises(ActionInputError) as raised:
        parse_action(data)
    assert raised.value.field == field
    assert words in str(raised.value)


def test_an_explicit_api_overrides_the_keys() -> None:
    with pytest.raises(ActionInputError, match="unknown action type None"):
        parse_action({"action": "screenshot"}, api="openai")
    with pytest.raises(ActionInputError, match="unknown API 'google'"):
        parse_action({"action": "screenshot"}, api="google")  # type: ignore[arg-type]


def test_actions_become_events_in_screen_coordinates() -> None:
    click = parse_action({"action": "left_click", "coordinate": [512, 384], "text": "ctrl"})
    event = click.to_event(XGA, pointer=(0, 0))
    assert (event.kind, event.button, event.modifiers) == (EventKind.CLICK, "left", ["ctrl"])
    assert event.position is not None and XGA.to_model(*event.position.as_tuple()) == (512, 384)
    # a click without a coordinate happens where the pointer is
    here = parse_action({"action": "left_click"}).to_event(XGA, pointer=(700, 500))
    assert here.position is not None and here.position.as_tuple() == (700, 500)
    drag = parse_action({"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 1023, "y": 767}]})
    event = drag.to_event(XGA, pointer=(0, 0))
    assert event.start_position is not None and event.position is not None
    assert (event.start_position.as_tuple(), event.position.as_tuple()) == ((0, 0), (1919, 1079))
    # OpenAI's pixels: scaled to the screen, then one wheel click per 100 screen pixels
    scroll = parse_action({"type": "scroll", "x": 5, "y": 5, "scroll_x": -40, "scroll_y": 160})
    event = scroll.to_event(XGA, pointer=(0, 0))
    assert (event.scroll_dx, event.scroll_dy) == (-1, 2)  # 75 px -> 1; 225 px -> 2
    assert [wheel_clicks(px) for px in (0, 1, -49, 150, 151, 1e9)] == [0, 1, -1, 2, 2, 200]


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        ({"action": "left_click", "element": "e12"}, EventKind.CLICK),
        ({"action": "triple_click", "element": "e12", "text": "shift"}, EventKind.TRIPLE_CLICK),
        ({"action": "mouse_move", "element": "e12"}, EventKind.MOVE),
        (
            {"action": "scroll", "element": "e12", "scroll_direction": "down", "scroll_amount": 2},
            EventKind.SCROLL,
        ),
        ({"action": "type", "element": "e12", "text": "hi"}, EventKind.TYPE),
        ({"type": "click", "element": "e12", "button": "right"}, EventKind.RIGHT_CLICK),
        ({"type": "double_click", "element": "e12"}, EventKind.DOUBLE_CLICK),
        ({"type": "move", "element": "e12"}, EventKind.MOVE),
        ({"type": "scroll", "element": "e12", "scroll_y": 100}, EventKind.SCROLL),
        ({"type": "type", "element": "e12", "text": "hi"}, EventKind.TYPE),
    ],
)
def test_actions_on_an_element_act_at_the_place_given_on_the_screen(
    data: dict[str, Any], kind: EventKind
) -> None:
    action = parse_action(data)
    assert (action.element, action.kind, action.position) == ("e12", kind, None)
    # the tool finds the element's centre on the screen; the event acts there
    event = action.to_event(XGA, pointer=(0, 0), at=(700, 500))
    assert event.position is not None and event.position.as_tuple() == (700, 500)


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"action": "left_click", "element": "e1", "coordinate": [1, 1]}, "element", "together"),
        ({"type": "click", "element": "e1", "x": 1}, "element", "together with x, y"),
        ({"type": "click", "element": "e0"}, "element", "'e0' is not an element ref"),
        ({"action": "type", "element": 12, "text": "a"}, "element", "valid string"),
        ({"type": "click", "element": "e1", "button": "back"}, "element", "acts on no element"),
        ({"type": "move", "x": 4}, "y", "is required"),
        ({"action": "key", "element": "e1", "text": "a"}, "element", "not a field of key"),
        (
            {
                "action": "left_click_drag",
                "element": "e1",
                "start_coordinate": [1, 1],
                "coordinate": [2, 2],
            },
            "element",
            "not a field of left_click_drag",
        ),
        ({"action": "left_click", "elements": 1}, "elements", "must be true or false"),
        ({"type": "screenshot", "set_of_mark": "no"}, "set_of_mark", "must be true or false"),
    ],
)
def test_bad_element_input_names_the_field(data: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(ActionInputError) as raised:
        parse_action(data)
    assert raised.value.field == field
    assert words in str(raised.value)


def test_every_action_may_ask_for_elements_and_marks() -> None:
    for data in (
        {"action": "zoom", "region": [0, 0, 5, 5]},
        {"type": "wait"},
        {"action": "key", "text": "a"},
    ):
        action = parse_action({**data, "elements": False, "set_of_mark": True})
        assert (action.elements, action.set_of_mark) == (False, True)
    assert parse_action({"action": "screenshot"}).elements is None  # as the tool's option
