"""ComputerTool end to end on a real Xvfb with the real Tk form: scaling, zoom, errors,
the recorded session and trajectory, and the results in each API's format."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core import EventKind, Region, Screenshot
from viewfinder.desktop import (
    ComputerTool,
    ComputerToolClosedError,
    ComputerToolOptionError,
    ResultFormatError,
    ScalingError,
    SettleOptions,
    anthropic_tool_definition,
    openai_tool_definition,
    to_anthropic_tool_result,
    to_openai_computer_call_output,
    to_openai_input_items,
)
from viewfinder.recorder import load_session, read_session

SWATCH = ("#d03030", "#30a040", "#3050d0")


def rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


@pytest.fixture(scope="module")
def tool(form_screen: Any) -> Iterator[ComputerTool]:
    with ComputerTool(form_screen.display, target="XGA") as computer:
        yield computer


def test_model_coordinates_land_on_the_widget_they_show(
    tool: ComputerTool, form_screen: Any
) -> None:
    """At 1920x1080 seen as 1024x768, the model pixels at the very edge of the Apply button
    hit it, and the ones just outside miss it."""
    assert tool.screen_size == (1920, 1080) and tool.model_size == (1024, 768)
    left, top, width, height = form_screen.layout["button"]
    middle_y = top + height // 2
    # the first and last model columns whose screen pixels all lie on the button
    first = next(
        m for m in range(1024) if tool.scaling.box_to_screen((m, 0, m + 1, 1)).x >= left + 2
    )
    last = max(
        m
        for m in range(1024)
        if tool.scaling.box_to_screen((m, 0, m + 1, 1)).right <= left + width - 2
    )
    model_y = tool.scaling.to_model(left, middle_y)[1]
    clicks = form_screen.state()["swatch"]["clicks"]
    for model_x in (first, last):
        result = tool({"action": "left_click", "coordinate": [model_x, model_y]})
        assert result.event is not None and result.event.position is not None
        screen_x = result.event.position.x
        assert left <= screen_x < left + width, (model_x, screen_x)
        clicks += 1
        form_screen.wait_for(lambda s, n=clicks: s["swatch"]["clicks"] == n, "a click on Apply")
    swatch = tool.scaling.to_model(*form_screen.centre("swatch"))
    assert result.screenshot is not None
    assert result.screenshot.pixel(*swatch) == rgb(SWATCH[(clicks - 1) % 3])
    # well off the button (right of it, on the swatch): no click on Apply
    tool({"action": "left_click", "coordinate": list(swatch)})
    tool({"action": "wait", "duration": 0.1})
    assert form_screen.state()["swatch"]["clicks"] == clicks


def test_zoom_returns_the_region_at_full_resolution(tool: ComputerTool, form_screen: Any) -> None:
    result = tool({"action": "zoom", "region": [0, 0, 256, 192]})
    assert not result.is_error, result.error
    shot = result.screenshot
    assert shot is not None and shot.size == (480, 270)  # a quarter of each axis, unscaled
    assert shot.region == Region(x=0, y=0, width=480, height=270)
    with form_screen.display.backend() as backend:
        direct = backend.grab(Region(x=0, y=0, width=480, height=270))
    assert shot.to_pil().convert("RGB").tobytes() == direct.tobytes()
    assert result.settle is None and "full resolution" in result.text


def test_a_malformed_action_is_a_readable_tool_error_and_the_next_action_works(
    tool: ComputerTool, form_screen: Any
) -> None:
    bad = [
        ({"action": "left_click", "coordinate": [1024, 5]}, "x from 0 to 1023 and y from 0 to 767"),
        ({"action": "teleport"}, "action: unknown action 'teleport'; allowed: cursor_position,"),
        ({"type": "click", "button": "left", "x": 5}, "click: y: is required"),
        ({"action": "key", "text": "ctrl+nosuchkey"}, "unknown key 'nosuchkey'"),
        ("left_click", "an action must be a JSON object"),
    ]
    for action, words in bad:
        result = tool(action)  # type: ignore[arg-type]
        assert result.is_error and result.error is not None
        assert result.error_type in ("ActionInputError", "CoordinateRangeError")
        assert words in result.error, result.error
        assert result.event is None and result.text == result.error
        # the model still sees the screen, to pick its next action
        assert result.screenshot is not None and result.screenshot.size == (1024, 768)
    clicks = form_screen.state()["swatch"]["clicks"]
    good = tool(
        {
            "action": "left_click",
            "coordinate": list(tool.scaling.to_model(*form_screen.centre("button"))),
        }
    )
    assert not good.is_error
    form_screen.wait_for(
        lambda s: s["swatch"]["clicks"] == clicks + 1, "the click after the errors"
    )


def test_results_in_each_apis_format(tool: ComputerTool) -> None:
    result = tool({"action": "screenshot"})
    block = to_anthropic_tool_result(result, "toolu_1")
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_1"
    assert block["is_error"] is False
    (image,) = [part for part in block["content"] if part["type"] == "image"]
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == result.screenshot.data  # type: ignore[union-attr]

    clicked = tool({"action": "mouse_move", "coordinate": [900, 700]})
    block = to_anthropic_tool_result(clicked, "toolu_2")
    assert [part["type"] for part in block["content"]] == ["text", "image"]
    assert block["content"][0]["text"].startswith("moved the pointer to (900, 700)")

    failed = tool({"action": "type"})
    block = to_anthropic_tool_result(failed, "toolu_3")
    assert block["is_error"] is True
    assert block["content"] == [{"type": "text", "text": failed.error}]

    item = to_openai_computer_call_output(
        clicked, "call_1", acknowledged_safety_checks=[{"id": "s"}]
    )
    assert item["type"] == "computer_call_output" and item["call_id"] == "call_1"
    assert item["output"]["type"] == "computer_screenshot"
    assert item["output"]["image_url"] == clicked.screenshot.data_url()  # type: ignore[union-attr]
    assert item["acknowledged_safety_checks"] == [{"id": "s"}]
    items = to_openai_input_items(failed, "call_2")
    assert [entry["type"] for entry in items] == ["computer_call_output", "message"]
    assert failed.error in items[1]["content"][0]["text"]  # type: ignore[operator]
    cursor = tool({"action": "cursor_position"})  # no screenshot: a blank image, no error
    assert to_openai_computer_call_output(cursor, "call_3")["output"]["image_url"].startswith(
        "data:image/png;base64,"
    )


def test_tool_definitions_carry_the_model_size(tool: ComputerTool) -> None:
    assert anthropic_tool_definition(tool) == {
        "type": "computer_20250124",
        "name": "computer",
        "display_width_px": 1024,
        "display_height_px": 768,
    }
    assert anthropic_tool_definition(tool, "computer_20251124") == {
        "type": "computer_20251124",
        "name": "computer",
        "display_width_px": 1024,
        "display_height_px": 768,
        "enable_zoom": True,
    }
    assert openai_tool_definition(tool) == {
        "type": "computer_use_preview",
        "display_width": 1024,
        "display_height": 768,
        "environment": "linux",
    }
    assert openai_tool_definition((1280, 800), "browser")["display_width"] == 1280
    with pytest.raises(ResultFormatError, match="computer_20250124 or computer_20251124"):
        anthropic_tool_definition(tool, "computer_20241022")  # type: ignore[arg-type]
    with pytest.raises(ResultFormatError, match="zoom needs the computer_20251124"):
        anthropic_tool_definition(tool, enable_zoom=True)
    with pytest.raises(ResultFormatError, match="unknown environment"):
        openai_tool_definition(tool, "amiga")  # type: ignore[arg-type]


def test_a_run_is_kept_as_steps_with_their_pre_action_frames(
    form_screen: Any, tmp_path: Path
) -> None:
    session = tmp_path / "session"
    button = form_screen.centre("button")
    colours = []
    with ComputerTool(form_screen.display.name, target="XGA", record_to=session) as tool:
        model_button = list(tool.scaling.to_model(*button))
        tool({"action": "screenshot"})
        for _ in range(2):
            colours.append(form_screen.state()["swatch"]["colour"])
            assert not tool({"action": "left_click", "coordinate": model_button}).is_error
        tool(
            {
                "action": "scroll",
                "coordinate": [50, 200],
                "scroll_direction": "down",
                "scroll_amount": 1,
            }
        )
        tool({"type": "drag", "path": [{"x": 400, "y": 400}, {"x": 420, "y": 410}]})
        tool({"action": "zoom", "region": [0, 0, 100, 100]})
        tool({"action": "bogus"})  # errors are not steps
        trajectory = tool.trajectory(goal="click Apply twice")
    assert [step.event.kind for step in trajectory.steps] == [
        EventKind.SCREENSHOT,
        EventKind.CLICK,
        EventKind.CLICK,
        EventKind.SCROLL,
        EventKind.DRAG,
        EventKind.SCREENSHOT,
    ]
    assert trajectory.metadata.goal == "click Apply twice"
    assert trajectory.metadata.screen is not None and trajectory.metadata.screen.width == 1920
    # events in screen coordinates; each frame shows the screen before its action
    for index, colour in zip((1, 2), colours, strict=True):
        step = trajectory.steps[index]
        assert step.event.position is not None and step.frame is not None
        assert (
            abs(step.event.position.x - button[0]) <= 1
            and abs(step.event.position.y - button[1]) <= 1
        )
        assert step.frame.size == (1920, 1080)
        assert step.frame.pixel(*form_screen.centre("swatch")) == rgb(colour)

    loaded = load_session(session)
    assert [step.event for step in loaded.steps] == [step.event for step in trajectory.steps]
    for ours, theirs in zip(trajectory.steps, loaded.steps, strict=True):
        assert ours.frame is not None and theirs.frame is not None
        assert ours.frame.data == theirs.frame.data
    found = read_session(session)
    assert found.metadata.status == "stopped" and found.metadata.input_source == "computer-tool"
    lines = [json.loads(line) for line in (session / "manifest.jsonl").read_text().splitlines()]
    assert lines[3]["action"] == "scroll" and lines[3]["api"] == "anthropic"
    assert len(lines[4]["path"]) == 2 and lines[5]["region"] == [0, 0, 188, 141]

    shown = CliRunner().invoke(build_app(), ["record", "show", str(session)])
    assert shown.exit_code == 0, shown.output
    assert "6 events, stopped" in shown.output and "(missing)" not in shown.output


def test_nothing_drawn_between_actions_means_one_frame_for_both(tool: ComputerTool) -> None:
    first = tool({"action": "screenshot"})
    second = tool({"action": "screenshot"})
    steps = tool.trajectory().steps[-2:]
    assert steps[0].frame is steps[1].frame  # the same grab, encoded once
    assert first.screenshot is not None and second.screenshot is not None
    assert first.screenshot.data == second.screenshot.data


def test_other_image_formats_and_options(form_screen: Any) -> None:
    with ComputerTool(form_screen.display, max_width=960, image_format="jpeg") as small:
        shot = small({"action": "screenshot"}).screenshot
        assert shot is not None and (shot.format, shot.size) == ("jpeg", (960, 540))
        assert isinstance(small.screenshot(), Screenshot)
    with pytest.raises(ComputerToolOptionError, match="unsupported image format 'gif'"):
        ComputerTool(form_screen.display, image_format="gif")
    with pytest.raises(ScalingError, match="unknown scaling target"):
        ComputerTool(form_screen.display, target="VGA")  # type: ignore[arg-type]
    with pytest.raises(ComputerToolOptionError, match="resample must be one of box, lanczos"):
        ComputerTool(form_screen.display, resample="sinc")  # type: ignore[arg-type]
    with ComputerTool(form_screen.display, target="XGA", resample="lanczos") as sharp:
        shot = sharp({"action": "screenshot"}).screenshot
        assert shot is not None and shot.size == (1024, 768)
    with pytest.raises(ComputerToolOptionError, match="settle must be a SettleOptions"):
        ComputerTool(form_screen.display, settle={"quiet": 1})  # type: ignore[arg-type]
    closed = ComputerTool(form_screen.display, settle=SettleOptions(method="poll"))
    assert closed.settle_method == "poll"
    closed.close()
    closed.close()
    with pytest.raises(ComputerToolClosedError):
        closed({"action": "screenshot"})


def test_an_existing_session_folder_is_refused(form_screen: Any, tmp_path: Path) -> None:
    from viewfinder.recorder import SessionExistsError

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SessionExistsError, match="is not empty"):
        ComputerTool(form_screen.display, record_to=tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]


def test_a_display_that_went_away_is_a_tool_error_not_an_exception() -> None:
    from viewfinder.xvfb import Display

    display = Display(640, 480).start()
    tool = ComputerTool(display)
    try:
        assert not tool({"action": "left_click", "coordinate": [10, 10]}).is_error
        display.stop()
        for action in ({"action": "left_click", "coordinate": [10, 10]}, {"action": "screenshot"}):
            result = tool(action)
            assert result.is_error and result.error_type == "DisplayGoneError", result.error
            assert result.screenshot is None
    finally:
        tool.close()
        display.stop()
