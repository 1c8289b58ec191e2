"""OpenAI's computer tool: a computer_call with an actions batch runs in order into one
computer_call_output, and every input item is checked with the openai SDK's own types."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai.types.responses import ComputerToolParam, ResponseComputerToolCall, ResponseInputParam

from viewfinder.desktop import (
    ComputerTool,
    openai_computer_tool_definition,
    to_openai_input_items,
)

sys.path.insert(0, str(Path(__file__).parent))
from event_log import EventLog
from sdk_types import check


@pytest.fixture
def screen() -> Iterator[tuple[Any, EventLog, ComputerTool]]:
    from viewfinder.xvfb import Display

    display = Display(1280, 1024).start()
    app = EventLog(display)
    tool = ComputerTool(display, target="auto")
    try:
        yield display, app, tool
    finally:
        tool.close()
        app.stop()
        display.stop()


def computer_call(actions: list[dict[str, Any]], number: int = 1) -> ResponseComputerToolCall:
    """The call as the SDK parses it from a response."""
    return ResponseComputerToolCall.model_validate(
        {
            "type": "computer_call",
            "id": f"cu_{number}",
            "call_id": f"call_{number}",
            "actions": actions,
            "pending_safety_checks": [],
            "status": "completed",
        }
    )


def answer(tool: ComputerTool, call: ResponseComputerToolCall) -> tuple[Any, list[dict[str, Any]]]:
    """One turn of a loop: the call run, the items sent back, checked with the SDK."""
    result = tool(call.model_dump(exclude_none=True))
    items = to_openai_input_items(result, call.call_id)
    sent = [{"role": "user", "content": "Use the computer."}, call.model_dump(exclude_none=True)]
    check(ResponseInputParam, sent + items)
    assert items[0]["output"]["type"] == "computer_screenshot"
    return result, items


def words(items: list[dict[str, Any]]) -> str:
    return "\n".join(
        part["text"]
        for item in items[1:]
        for part in item["content"]
        if part["type"] == "input_text"
    )


def test_the_tool_definition_is_the_sdk_s() -> None:
    check(ComputerToolParam, openai_computer_tool_definition())


def test_a_batch_of_five_actions_runs_in_order_into_one_output(screen: Any) -> None:
    _, app, tool = screen

    def at(name: str) -> dict[str, int]:
        x, y = tool.scaling.to_model(*app.centre(name))
        return {"x": x, "y": y}

    mark = app.mark()
    call = computer_call(
        [
            {"type": "click", "button": "left", **at("red")},
            {"type": "click", "button": "right", **at("green")},
            {"type": "click", "button": "left", **at("entry")},
            {"type": "type", "text": "batch"},
            {"type": "keypress", "keys": ["ENTER"]},
        ]
    )
    result, items = answer(tool, call)
    assert not result.is_error, result.error
    lines = app.wait_for(mark, "key Return -")
    assert app.presses(mark) == ["press red 1 -", "press green 3 -", "press entry 1 -"]
    order = [line for line in lines if line.startswith(("press", "text batch", "key Return"))]
    assert order == [
        "press red 1 -",
        "press green 3 -",
        "press entry 1 -",
        "text batch",
        "key Return -",
    ]
    text = words(items)
    assert text.startswith("ran 5 actions in order:")
    for number, name in enumerate(["click", "click", "click", "type", "keypress"], 1):
        assert f"\n{number}. {name}: " in text
    assert "the screen changed" in text  # what changed, carried to the model
    assert len(items) == 2 and items[1]["type"] == "message"


def test_a_failing_action_stops_the_batch_and_says_what_ran(screen: Any) -> None:
    _, app, tool = screen
    x, y = tool.scaling.to_model(*app.centre("blue"))
    mark = app.mark()
    call = computer_call(
        [
            {"type": "click", "button": "left", "x": x, "y": y},
            {"type": "click", "button": "left", "x": 99999, "y": 5},
            {"type": "click", "button": "left", "x": x, "y": y},
            {"type": "keypress", "keys": ["ENTER"]},
        ]
    )
    result, items = answer(tool, call)
    assert result.is_error
    app.wait_for(mark, "release blue 1")
    assert app.presses(mark) == ["press blue 1 -"]  # the actions after the failure never ran
    text = words(items)
    assert "action 2 of 4 (click) failed: " in text
    assert "action 1 (click) ran before it" in text
    assert "actions 3-4 (click, keypress) were skipped (not run)" in text


def test_the_display_killed_mid_loop_answers_every_call(screen: Any) -> None:
    display, app, tool = screen
    x, y = tool.scaling.to_model(*app.centre("red"))
    mark = app.mark()
    result, _ = answer(tool, computer_call([{"type": "click", "button": "left", "x": x, "y": y}]))
    assert not result.is_error
    app.wait_for(mark, "release red 1")
    display.stop()
    for number, actions in enumerate(
        ([{"type": "click", "button": "left", "x": x, "y": y}], [{"type": "screenshot"}]), 2
    ):
        result, items = answer(tool, computer_call(actions, number))  # items, no exception
        assert result.is_error and result.screenshot is None
        assert items[0]["call_id"] == f"call_{number}"
        said = words(items)
        assert "display" in said and ("went away" in said or "gone" in said), said
        assert "blank" in said
