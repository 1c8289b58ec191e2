"""Anthropic's computer toolset (computer_toolset_20260801): every member performed on a
real Tk app, every request and result checked with the anthropic SDK's own types."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import MessageParam, ToolUnionParam
from anthropic.types.beta import (
    BetaComputerToolset20260801Param,
    BetaComputerToolUseBlock,
    BetaMessageParam,
    BetaToolUnionParam,
)
from pydantic import TypeAdapter

from viewfinder.desktop import ComputerTool, ComputerToolset, computer_toolset_definition
from viewfinder.desktop.toolset_actions import MEMBERS

sys.path.insert(0, str(Path(__file__).parent))
from event_log import EventLog
from sdk_types import check

_ids = itertools.count(1)


@dataclass
class Env:
    app: EventLog
    tool: ComputerTool
    toolset: ComputerToolset

    def at(self, name: str, dx: int = 0) -> list[int]:
        """Where widget ``name``'s centre is in the screenshots (model pixels)."""
        x, y = self.app.centre(name)
        return list(self.tool.scaling.to_model(x + dx, y))


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    from viewfinder.xvfb import Display

    with Display(1280, 1024) as display:  # scaled to 1198x959 by "auto"
        app = EventLog(display)
        tool = ComputerTool(display, target="auto")
        try:
            yield Env(app, tool, ComputerToolset(tool))
        finally:
            tool.close()
            app.stop()


def member_call(toolset: ComputerToolset, name: str, input: dict[str, Any]) -> dict[str, Any]:
    """One turn of a loop: the model's tool_use block (the SDK's model of that member's
    call), viewfinder's tool_result, and the messages a loop sends next, checked."""
    block = TypeAdapter(BetaComputerToolUseBlock).validate_python(
        {
            "type": "tool_use",
            "id": f"toolu_{next(_ids):03d}",
            "name": name,
            "input": input,
            "toolset_name": "computer",
        }
    )
    assert type(block).__name__ == f"BetaComputer{_camel(name)}ToolUseBlock"
    result = toolset.tool_result(block)
    messages = [
        {"role": "user", "content": "Use the computer."},
        {"role": "assistant", "content": [block.model_dump(exclude_none=True)]},
        {"role": "user", "content": [result]},
    ]
    check(list[BetaMessageParam], messages)
    check(list[MessageParam], messages)  # the same, on the Messages API without betas
    assert result["toolset_name"] == "computer" and result["tool_use_id"] == block.id
    return result


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def texts(result: dict[str, Any]) -> list[str]:
    return [part["text"] for part in result["content"] if part["type"] == "text"]


def images(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for part in result["content"] if part["type"] == "image"]


def clicks(lines: list[str]) -> list[str]:
    return [line for line in lines if line.split()[0] in ("press", "double", "triple")]


def ok(result: dict[str, Any]) -> None:
    assert result["is_error"] is False, texts(result)


def test_the_definition_declares_the_family_with_its_configs() -> None:
    plain = computer_toolset_definition()
    assert plain == {"type": "computer_toolset_20260801"}
    no_zoom = computer_toolset_definition(zoom=False, configs={"wait": {"enabled": False}})
    assert no_zoom["configs"] == {"wait": {"enabled": False}, "zoom": {"enabled": False}}
    for entry in (plain, no_zoom):
        check(BetaComputerToolset20260801Param, entry)
        check(list[BetaToolUnionParam], [entry])
        check(list[ToolUnionParam], [entry])


# each member: its input, and what the app's log must then show
def _left_click(env: Env) -> None:
    mark = env.app.mark()
    result = member_call(env.toolset, "left_click", {"coordinate": env.at("red")})
    ok(result)
    assert texts(result)[0] == "Clicked." and len(images(result)) == 1
    env.app.wait_for(mark, "release red 1")
    assert env.app.presses(mark) == ["press red 1 -"]


def _left_click_holding(env: Env) -> None:
    mark = env.app.mark()
    ok(member_call(env.toolset, "left_click", {"coordinate": env.at("green"), "text": "shift"}))
    env.app.wait_for(mark, "release green 1")
    assert env.app.presses(mark) == ["press green 1 shift"]


def _right_click(env: Env) -> None:
    mark = env.app.mark()
    ok(member_call(env.toolset, "right_click", {"coordinate": env.at("green")}))
    env.app.wait_for(mark, "release green 3")
    assert env.app.presses(mark) == ["press green 3 -"]


def _middle_click(env: Env) -> None:
    mark = env.app.mark()
    ok(member_call(env.toolset, "middle_click", {"coordinate": env.at("blue")}))
    env.app.wait_for(mark, "release blue 2")
    assert env.app.presses(mark) == ["press blue 2 -"]


def _double_click(env: Env) -> None:
    mark = env.app.mark()
    ok(member_call(env.toolset, "double_click", {"coordinate": env.at("yellow")}))
    env.app.wait_for(mark, "release yellow 1")
    lines = env.app.wait_for(mark, "double yellow")
    # Tk reports the second press as the double-click, not as a press of its own
    assert clicks(lines) == ["press yellow 1 -", "double yellow"]


def _triple_click(env: Env) -> None:
    mark = env.app.mark()
    ok(member_call(env.toolset, "triple_click", {"coordinate": env.at("red")}))
    lines = env.app.wait_for(mark, "triple red")
    assert clicks(lines) == ["press red 1 -", "double red", "triple red"]


def _mouse_move_and_cursor_position(env: Env) -> None:
    mark = env.app.mark()
    point = env.at("blue")
    result = member_call(env.toolset, "mouse_move", {"coordinate": point})
    ok(result)
    assert texts(result)[0] == "Moved the mouse."
    env.app.wait_for(mark, "enter blue")
    position = member_call(env.toolset, "cursor_position", {})
    ok(position)
    assert texts(position) == [f"X={point[0]},Y={point[1]}"]
    assert env.app.presses(mark) == []


def _mouse_down_and_up(env: Env) -> None:
    ok(member_call(env.toolset, "mouse_move", {"coordinate": env.at("pad")}))
    mark = env.app.mark()
    down = member_call(env.toolset, "left_mouse_down", {})
    ok(down)
    assert texts(down)[0] == "Left mouse button pressed."
    env.app.wait_for(mark, "press pad 1 -")
    ok(member_call(env.toolset, "left_mouse_up", {}))
    env.app.wait_for(mark, "release pad 1")
    assert env.app.presses(mark) == ["press pad 1 -"]


def _left_click_drag(env: Env) -> None:
    width = env.app.layout["pad"][2]
    start, end = env.at("pad", -width // 3), env.at("pad", width // 3)
    mark = env.app.mark()
    result = member_call(
        env.toolset,
        "left_click_drag",
        {"start_coordinate": start, "coordinate": end, "text": "ctrl"},
    )
    ok(result)
    assert texts(result)[0] == "Dragged."
    lines = env.app.wait_for(mark, "release pad 1")
    assert env.app.presses(mark) == ["press pad 1 ctrl"]
    end_screen = env.tool.scaling.to_screen(*end)
    assert f"motion pad {end_screen[0]} {end_screen[1]}" in lines, lines


def _scroll(env: Env) -> None:
    mark = env.app.mark()
    result = member_call(
        env.toolset,
        "scroll",
        {"coordinate": env.at("blue"), "scroll_direction": "down", "scroll_amount": 3},
    )
    ok(result)
    assert texts(result)[0] == "Scrolled down."
    env.app.wait_for(mark, "release blue 5")
    assert env.app.presses(mark) == ["press blue 5 -"] * 3


def _type_and_key(env: Env) -> None:
    ok(member_call(env.toolset, "left_click", {"coordinate": env.at("entry")}))
    mark = env.app.mark()
    typed = member_call(env.toolset, "type", {"text": "hello"})
    ok(typed)
    assert texts(typed)[0] == "Typed."
    env.app.wait_for(mark, "text hello")
    mark = env.app.mark()
    pressed = member_call(env.toolset, "key", {"text": "BackSpace", "repeat": 3})
    ok(pressed)
    assert texts(pressed)[0] == "Pressed BackSpace."
    lines = env.app.wait_for(mark, "text he")
    assert [line for line in lines if line.startswith("key ")] == ["key BackSpace -"] * 3
    assert env.app.presses(mark) == []


def _hold_key(env: Env) -> None:
    mark = env.app.mark()
    result = member_call(env.toolset, "hold_key", {"text": "shift", "duration": 1})
    ok(result)
    assert texts(result)[0] == "Held shift for 1s."
    lines = env.app.wait_for(mark, "key Shift_L -")
    env.app.wait_for(mark, next(line for line in env.app.since(mark) if line.startswith("keyup")))
    (up,) = [line for line in env.app.since(mark) if line.startswith("keyup")]
    assert up.startswith("keyup Shift_L") and float(up.split()[-1]) >= 0.9, lines


def _wait(env: Env) -> None:
    mark = env.app.mark()
    result = member_call(env.toolset, "wait", {"duration": 1})
    ok(result)
    assert texts(result)[0] == "Waited 1s." and len(images(result)) == 1
    assert env.app.presses(mark) == []


def _screenshot_and_zoom(env: Env) -> None:
    import base64

    from viewfinder.core import Screenshot

    shot = member_call(env.toolset, "screenshot", {})
    ok(shot)
    (image,) = images(shot)
    picture = Screenshot.from_bytes(base64.b64decode(image["source"]["data"]), source="test")
    assert picture.size == env.tool.model_size
    red = picture.pixel(*env.at("red"))
    assert red[0] > 180 and red[1] < 60 and red[2] < 60
    x, y = env.at("red")
    zoomed = member_call(env.toolset, "zoom", {"region": [x - 20, y - 20, x + 20, y + 20]})
    ok(zoomed)
    assert len(images(zoomed)) == 1


MEMBER_TESTS: dict[str, Callable[[Env], None]] = {
    "left_click": _left_click,
    "left_click holding shift": _left_click_holding,
    "right_click": _right_click,
    "middle_click": _middle_click,
    "double_click": _double_click,
    "triple_click": _triple_click,
    "mouse_move, cursor_position": _mouse_move_and_cursor_position,
    "left_mouse_down, left_mouse_up": _mouse_down_and_up,
    "left_click_drag holding ctrl": _left_click_drag,
    "scroll": _scroll,
    "type, key with repeat": _type_and_key,
    "hold_key": _hold_key,
    "wait": _wait,
    "screenshot, zoom": _screenshot_and_zoom,
}


def test_every_member_is_tested() -> None:
    covered = {name for title in MEMBER_TESTS for name in title.replace(",", " ").split()}
    assert set(MEMBERS) <= covered


@pytest.mark.parametrize("title", list(MEMBER_TESTS))
def test_member(env: Env, title: str) -> None:
    MEMBER_TESTS[title](env)


def test_a_disabled_member_is_refused_by_name(env: Env) -> None:
    toolset = ComputerToolset(env.tool, zoom=False, configs={"right_click": {"enabled": False}})
    assert "zoom" not in toolset.members and "right_click" not in toolset.members
    mark = env.app.mark()
    for name, input in (
        ("zoom", {"region": [0, 0, 10, 10]}),
        ("right_click", {"coordinate": env.at("red")}),
    ):
        result = member_call(toolset, name, input)
        assert result["is_error"] is True
        (text,) = texts(result)
        assert f"'{name}' is disabled" in text and images(result) == []
    assert env.app.presses(mark) == []  # nothing was clicked
    ok(member_call(toolset, "screenshot", {}))  # the next call works


def test_a_field_the_member_does_not_take_is_an_error_naming_it(env: Env) -> None:
    mark = env.app.mark()
    result = member_call(env.toolset, "mouse_move", {"coordinate": env.at("red"), "text": "shift"})
    assert result["is_error"] is True
    (text,) = texts(result)
    assert text.startswith("mouse_move: text: is not a field of mouse_move; allowed: fields")
    off = member_call(env.toolset, "left_click", {"coordinate": [5000, 5]})
    assert off["is_error"] is True and "coordinate" in texts(off)[0]
    assert env.app.presses(mark) == []


def test_the_display_killed_mid_loop_answers_every_call() -> None:
    from viewfinder.xvfb import Display

    display = Display(800, 600).start()
    app = EventLog(display)
    tool = ComputerTool(display)
    toolset = ComputerToolset(tool)
    try:
        mark = app.mark()
        x, y = app.centre("red")
        ok(member_call(toolset, "left_click", {"coordinate": [x, y]}))
        app.wait_for(mark, "release red 1")
        display.stop()
        for name, input in (("left_click", {"coordinate": [x, y]}), ("screenshot", {})):
            result = member_call(toolset, name, input)  # a result, not an exception
            assert result["is_error"] is True
            (text,) = texts(result)
            assert "display" in text.lower(), text
    finally:
        tool.close()
        app.stop()
        display.stop()
