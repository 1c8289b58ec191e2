"""The desktop's tools through the registry: `computer` and `screenshot` on a real Xvfb."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from viewfinder.core import Tool, ToolContext, ToolResult, call_tool, hookimpl, tool_registry
from viewfinder.core.result_budget import budget_for
from viewfinder.core.testing import wait_until
from viewfinder.desktop.desktop import Desktop
from viewfinder.desktop.images import model_size_within
from viewfinder.desktop.scaling import Scaling

GREY = (128, 128, 128)


@pytest.fixture(scope="module")
def form_desktop(
    tmp_path_factory: pytest.TempPathFactory,
    form_app: Callable[..., list[str]],
    form_state: Callable[[Path], dict[str, Any]],
) -> Iterator[tuple[Desktop, Path, dict[str, Any]]]:
    """A 1280x960 desktop with the form; its state file and the widgets' layout."""
    state = tmp_path_factory.mktemp("form") / "state.json"
    with Desktop(size=(1280, 960), apps=[form_app(state)]) as desktop:
        layout = wait_until(lambda: form_state(state).get("layout"), "the form drawn")
        yield desktop, state, layout


def middle(box: list[int]) -> tuple[int, int]:
    x, y, width, height = box
    return x + width // 2, y + height // 2


def test_the_desktop_registers_computer_and_screenshot_with_schemas_for_a_model() -> None:
    tools = tool_registry()
    computer, screenshot = tools["computer"], tools["screenshot"]
    assert computer.plugin == screenshot.plugin == "desktop"
    schema = computer.input_schema()
    assert schema["required"] == ["action"]
    actions = set(schema["properties"]["action"]["enum"])
    assert {
        "left_click",
        "left_click_drag",
        "scroll",
        "zoom",
        "hold_key",
        "triple_click",
    } <= actions
    assert len(actions) == 17
    for name, field in schema["properties"].items():
        assert len(field.get("description", "")) > 20, name
    assert "pixels of the screenshots" in schema["properties"]["coordinate"]["description"]
    shot_schema = screenshot.input_schema()
    assert set(shot_schema["properties"]) == {
        "region",
        "scale",
        "max_width",
        "max_height",
        "format",
        "elements",
        "set_of_mark",
    }
    assert "numbered box" in shot_schema["properties"]["set_of_mark"]["description"]
    assert "ref (e12)" in shot_schema["properties"]["elements"]["description"]
    assert "instead of coordinate" in schema["properties"]["element"]["description"].lower()
    assert computer.definition()["annotations"]["readOnlyHint"] is False
    assert screenshot.definition()["annotations"]["readOnlyHint"] is True


def test_screenshot_returns_the_screen_a_region_and_smaller_images(
    form_desktop: tuple[Desktop, Path, dict[str, Any]],
) -> None:
    desktop, _, layout = form_desktop
    with ToolContext(display=desktop.display_name) as context:
        whole = call_tool("screenshot", {}, context)
        assert not whole.is_error, whole.text
        [image] = whole.images
        assert image.size == (1280, 960) and image.pixel(*middle(layout["swatch"])) == GREY
        assert whole.structured == {
            "screen": {"width": 1280, "height": 960},
            "image": {"width": 1280, "height": 960},
            "region": None,
        }

        x, y, width, height = layout["swatch"]
        region = {"x": x, "y": y, "width": width, "height": height}
        part = call_tool("screenshot", {"region": region, "format": "jpeg"}, context)
        [cropped] = part.images
        assert (cropped.width, cropped.height, cropped.format) == (width, height, "jpeg")
        assert cropped.pixel(width // 2, height // 2) == pytest.approx(GREY, abs=6)
        assert f"add {x},{y}" in part.text

        half = call_tool("screenshot", {"scale": 0.5}, context)
        assert half.images[0].size == (640, 480)
        assert "multiply the image's coordinates by 2" in half.text
        # the swatch's middle, read off the half-size image, is still grey
        sx, sy = middle(layout["swatch"])
        assert half.images[0].pixel(sx // 2, sy // 2) == pytest.approx(GREY, abs=6)

        fitted = call_tool("screenshot", {"max_width": 800, "max_height": 800}, context)
        assert fitted.images[0].size == (800, 600)
        webp = call_tool("screenshot", {"format": "webp", "max_height": 96}, context)
        assert (webp.images[0].format, webp.images[0].size) == ("webp", (128, 96))


def test_screenshot_errors_are_results_the_model_can_read(
    form_desktop: tuple[Desktop, Path, dict[str, Any]],
) -> None:
    desktop, _, _ = form_desktop
    with ToolContext(display=desktop.display_name) as context:
        outside = call_tool(
            "screenshot", {"region": {"x": 1200, "y": 0, "width": 200, "height": 10}}, context
        )
        assert outside.is_error and "1280x960" in outside.text
        wrong = call_tool("screenshot", {"format": "gif", "scale": 2}, context)
        assert wrong.is_error and "format" in wrong.text and "scale" in wrong.text
        assert not call_tool("screenshot", {}, context).is_error  # the next call works
    nowhere = call_tool("screenshot", {}, ToolContext())
    assert nowhere.is_error and "no screen" in nowhere.text


def test_computer_acts_on_the_session_display_and_returns_the_settled_frame(
    form_desktop: tuple[Desktop, Path, dict[str, Any]],
    form_state: Callable[[Path], dict[str, Any]],
) -> None:
    desktop, state, layout = form_desktop
    clicks = form_state(state)["swatch"]["clicks"]
    # 1280x960 is 1.23 megapixels: the model sees it as large as Claude takes (1.15)
    width, height = model_size_within(1280, 960, budget_for("claude-desktop")) or (0, 0)
    scaling = Scaling.choose(1280, 960, max_width=width, max_height=height)
    assert scaling.model_size == (1237, 928)
    with ToolContext(display=desktop.display_name) as context:
        x, y = scaling.to_model(*middle(layout["button"]))
        result = call_tool("computer", {"action": "left_click", "coordinate": [x, y]}, context)
        assert not result.is_error, result.text
        wait_until(lambda: form_state(state)["swatch"]["clicks"] == clicks + 1, "the click")
        [frame] = result.images
        assert frame.size == (1237, 928)
        assert result.structured == {
            "action": "left_click",
            "screen": {"width": 1280, "height": 960},
            "image": {"width": 1237, "height": 928},
        }
        assert frame.pixel(*scaling.to_model(*middle(layout["swatch"]))) != GREY
        assert result.text
        tool = context.get_resource("computer")
        assert tool is not None
        # the same ComputerTool serves the session's next call
        call_tool("computer", {"action": "mouse_move", "coordinate": [5, 5]}, context)
        assert context.get_resource("computer") is tool
    assert context.get_resource("computer") is None  # closed with the session


def test_computer_scales_for_the_session_target(
    form_desktop: tuple[Desktop, Path, dict[str, Any]],
    form_state: Callable[[Path], dict[str, Any]],
) -> None:
    desktop, state, layout = form_desktop
    with ToolContext(display=desktop.display_name, values={"target": "XGA"}) as context:
        shot = call_tool("computer", {"action": "screenshot"}, context)
        assert shot.images[0].size == (1024, 768)
        # the entry, at XGA coordinates (1280x960 -> 1024x768 is 0.8 on both axes)
        x, y = middle(layout["entry"])
        call_tool(
            "computer", {"action": "triple_click", "coordinate": [x * 4 // 5, y * 4 // 5]}, context
        )
        typed = call_tool("computer", {"action": "type", "text": "Grace"}, context)
        assert not typed.is_error, typed.text
        wait_until(lambda: form_state(state)["entry"]["text"] == "Grace", "the typed name")


def test_a_malformed_action_is_an_error_result_and_the_next_action_works(
    form_desktop: tuple[Desktop, Path, dict[str, Any]],
) -> None:
    desktop, _, _ = form_desktop
    with ToolContext(display=desktop.display_name) as context:
        unknown = call_tool("computer", {"action": "fly"}, context)
        assert unknown.is_error and "action" in unknown.text and "left_click" in unknown.text
        extra = call_tool("computer", {"action": "left_click", "speed": 3}, context)
        assert extra.is_error and "speed" in extra.text
        short = call_tool("computer", {"action": "left_click", "coordinate": [1]}, context)
        assert short.is_error and "coordinate" in short.text
        missing = call_tool("computer", {"action": "type"}, context)
        assert missing.is_error and "text" in missing.text
        ok = call_tool("computer", {"action": "screenshot"}, context)
        assert not ok.is_error and ok.images
    nowhere = call_tool("computer", {"action": "screenshot"}, ToolContext())
    assert nowhere.is_error and "no screen" in nowhere.text


def test_the_plugin_module_and_the_registry_import_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from viewfinder.core import tool_registry\n"
        "assert {'computer', 'screenshot'} <= set(tool_registry())\n"
        "heavy = [m for m in ('viewfinder.desktop.computer', 'viewfinder.xvfb.backend', "
        "'Xlib', 'typer') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


class Press(BaseModel):
    key: str = Field(description="A key or combination in xdotool names: 'Return', 'ctrl+s'.")


def press(arguments: Press, context: ToolContext) -> ToolResult:
    from viewfinder.desktop import ComputerTool

    computer = context.resource("computer", lambda: ComputerTool(context.display or ""))
    result = computer({"action": "key", "text": arguments.key})
    return ToolResult.of(result.text, result.screenshot, is_error=result.is_error)


class PressPlugin:
    """The plugin of docs/desktop.md, "Adding a tool"."""

    @hookimpl
    def viewfinder_register_tools(self, register: Callable[[Tool], None]) -> None:
        register(Tool("press", "Press a key on the session's screen.", Press, press))


def test_a_plugin_tool_shares_the_sessions_computer_tool(
    form_desktop: tuple[Desktop, Path, dict[str, Any]],
    form_state: Callable[[Path], dict[str, Any]],
    viewfinder_plugin: Callable[..., str],
) -> None:
    desktop, state, _ = form_desktop
    viewfinder_plugin(PressPlugin(), name="test-press")
    assert tool_registry()["press"].plugin == "test-press"
    with ToolContext(display=desktop.display_name) as context:
        looked = call_tool("computer", {"action": "screenshot"}, context)
        assert not looked.is_error
        computer = context.get_resource("computer")
        pressed = call_tool("press", {"key": "ctrl+a"}, context)
        assert not pressed.is_error, pressed.text
        assert pressed.images and "pressed ctrl+a" in pressed.text
        wait_until(lambda: form_state(state)["last_key"] == "ctrl+a", "the key combination")
        assert context.get_resource("computer") is computer
        # both steps are in the one run
        assert [step.event.kind for step in computer.trajectory().steps][-2:] == [
            "screenshot",
            "key",
        ]
