"""``viewfinder mcp`` over stdio, driven by the MCP SDK's client, as Claude Code runs it.

One server for the module: a 1600x1000 desktop with the form app of
examples/desktop_form.py, screenshots shrunk for the model to 800x500 (half size, so
the form's Apply button at screen (20..120, 70..106) is at (10..60, 35..53) in the
images, and its swatch at screen (140..220, 70..106) at (70..110, 35..53)).
The last test disconnects it and counts what is left.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.core import tool_registry
from viewfinder.core.result_budget import budget_for
from viewfinder.core.testing import running, wait_until
from viewfinder.mcp.schemas import inline_refs
from viewfinder.mcp.testing import (
    StdioServer,
    close_to,
    image_of_blob,
    images_of,
    still_running,
    text_of,
)

ROOT = Path(__file__).resolve().parents[3]
FORM = ROOT / "examples" / "desktop_form.py"
#: Colours of the form's swatch: before and after one click of Apply.
SWATCH_GREY = (0x80, 0x80, 0x80)
SWATCH_RED = (0xD0, 0x30, 0x30)
SCREEN_URI = "viewfinder://session/screen.png"
RECORDING_URI = "viewfinder://session/recording/manifest.jsonl"
SWATCH_IN_IMAGE = (90, 44)
APPLY_IN_IMAGE = [35, 44]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioServer]:
    server = StdioServer(
        tmp_path_factory.mktemp("mcp-stdio"),
        "--size", "1600x1000", "--max-size", "800x500",
        "--", sys.executable, str(FORM),
        cwd=ROOT,
    )  # fmt: skip
    try:
        yield server
    finally:
        server.close()


def test_the_tools_are_the_registrys_with_their_schemas_and_descriptions(
    server: StdioServer,
) -> None:
    listed = {tool.name: tool for tool in server.connection.list_tools().tools}
    registry = tool_registry()
    assert set(listed) == set(registry)
    assert {"computer", "screenshot", "run_code", "browser_execute"} <= set(listed)
    for name, tool in registry.items():
        # every reference inlined: some clients follow no $ref
        assert listed[name].input_schema == inline_refs(tool.input_schema()), name
        assert "$ref" not in json.dumps(listed[name].input_schema), name
        assert "$defs" not in listed[name].input_schema, name
        assert listed[name].description == tool.description, name
    region = listed["screenshot"].input_schema["properties"]["region"]
    assert {"x", "y", "width", "height"} <= set(
        json.dumps(region) and region["anyOf"][0]["properties"]
    )
    assert listed["screenshot"].annotations.read_only_hint is True


def test_screenshot_is_the_sessions_screen_shrunk_for_the_model(server: StdioServer) -> None:
    result = server.call("screenshot")
    assert not result.is_error, text_of(result)
    (image,) = images_of(result)
    assert image.size == (800, 500)
    assert "1600x1000 screen" in text_of(result) and "multiply" in text_of(result)
    assert close_to(image.getpixel(SWATCH_IN_IMAGE), SWATCH_GREY)
    assert close_to(image.getpixel((300, 200)), (0xEC, 0xEC, 0xEC))  # the form's background
    assert close_to(image.getpixel((700, 400)), (0, 0, 0))  # the screen beyond the window
    assert result.structured_content["screen"] == {"width": 1600, "height": 1000}


def test_computer_clicks_the_button_and_its_colour_changes_in_the_image(
    server: StdioServer,
) -> None:
    before = images_of(server.call("screenshot"))[0].getpixel(SWATCH_IN_IMAGE)
    result = server.call("computer", {"action": "left_click", "coordinate": APPLY_IN_IMAGE})
    assert not result.is_error, text_of(result)
    (image,) = images_of(result)
    assert image.size == (800, 500)  # in the model's coordinates, as the click was
    assert close_to(before, SWATCH_GREY) or close_to(before, SWATCH_RED)
    assert close_to(image.getpixel(SWATCH_IN_IMAGE), SWATCH_RED), image.getpixel(SWATCH_IN_IMAGE)


def test_run_code_returns_stdout_and_the_capture_of_its_window(server: StdioServer) -> None:
    code = (
        "import tkinter as tk\n"
        "root = tk.Tk()\n"
        "root.geometry('300x200+1200+700')\n"
        "root.configure(bg='#12ab34')\n"
        "root.wait_visibility()\n"
        "root.update()\n"
        "print('window drawn')\n"
        "capture_screenshot()\n"
    )
    result = server.call("run_code", {"code": code})
    assert not result.is_error, text_of(result)
    assert "window drawn" in text_of(result)
    assert result.structured_content["exit_code"] == 0
    (capture,) = images_of(result)
    # the session's own screen, 1600x1000, within the client's long edge and pixels
    scale = budget_for("claude-desktop").scale_for(1600, 1000)
    assert capture.size == (round(1600 * scale), round(1000 * scale))
    assert close_to(capture.getpixel((round(1350 * scale), round(800 * scale))), (0x12, 0xAB, 0x34))
    # the form is on it too
    assert close_to(capture.getpixel((round(180 * scale), round(88 * scale))), SWATCH_RED)
    assert "from 1600x1000" in text_of(result)


def test_browser_execute_returns_a_screenshot_of_the_page(server: StdioServer) -> None:
    page = "data:text/html,<body style='margin:0;background:%232050c0'></body>"
    result = server.call(
        "browser_execute", {"code": "await page.screenshot()", "url": page, "timeout": 60}
    )
    assert not result.is_error, text_of(result)
    (shot,) = images_of(result)
    assert close_to(shot.getpixel((shot.width // 2, shot.height // 2)), (0x20, 0x50, 0xC0))


def test_a_tool_error_names_what_was_wrong_and_the_next_call_works(server: StdioServer) -> None:
    unknown = server.call("paint", {"colour": "red"})
    assert unknown.is_error
    assert "unknown tool 'paint'" in text_of(unknown) and "screenshot" in text_of(unknown)

    wrong_type = server.call("computer", {"action": "left_click", "coordinate": "the button"})
    assert wrong_type.is_error and "coordinate" in text_of(wrong_type)
    missing = server.call("run_code", {})
    assert missing.is_error and "code: is required" in text_of(missing)

    crash = server.call("run_code", {"code": "import os, signal\nos.kill(os.getpid(), 9)"})
    assert crash.is_error
    assert "killed" in text_of(crash) and crash.structured_content["exit_code"] != 0

    after = server.call("run_code", {"code": "print(6 * 7)"})
    assert not after.is_error and "42" in text_of(after)
    shot = server.call("screenshot")
    assert not shot.is_error and len(images_of(shot)) == 1


def test_resources_are_the_screen_and_the_recording_in_progress(server: StdioServer) -> None:
    listed = [str(resource.uri) for resource in server.connection.list_resources().resources]
    assert listed == [SCREEN_URI]
    (screen,) = server.connection.read_resource(SCREEN_URI).contents
    assert screen.mime_type == "image/png"
    image = image_of_blob(screen.blob)
    assert image.size == (1600, 1000)  # full size: for a person to look at
    assert close_to(image.getpixel((600, 400)), (0xEC, 0xEC, 0xEC))

    started = server.call("record_start", {"folder": "recording"})
    assert not started.is_error, text_of(started)
    try:
        listed = [str(resource.uri) for resource in server.connection.list_resources().resources]
        assert RECORDING_URI in listed
        server.call("computer", {"action": "left_click", "coordinate": APPLY_IN_IMAGE})

        def recorded() -> list[dict[str, object]]:
            (manifest,) = server.connection.read_resource(RECORDING_URI).contents
            return [json.loads(line) for line in manifest.text.splitlines() if line.strip()]

        lines = wait_until(recorded, "the click to reach the manifest")
        assert any("click" in json.dumps(line) for line in lines)
    finally:
        stopped = server.call("record_stop")
    assert not stopped.is_error, text_of(stopped)
    assert (server.workdir / "recording" / "manifest.jsonl").exists()
    listed = [str(resource.uri) for resource in server.connection.list_resources().resources]
    assert listed == [SCREEN_URI]


def test_closing_stdin_stops_the_session_and_everything_it_started(server: StdioServer) -> None:
    assert not server.call("run_code", {"code": "print('busy')"}).is_error
    started = server.processes()
    programs = set(started.values())
    assert "Xvfb" in programs  # the display
    assert any(name.startswith("python") for name in programs)  # the form, the worker
    server.close()  # the SDK client closes the server's stdin
    wait_until(lambda: not running(server.pid), "the server to exit")
    wait_until(lambda: not still_running(started), "what the server started to end", timeout=20)
    assert "stopped (stdin closed)" in server.log_path.read_text()
    assert "Traceback" not in server.log_path.read_text()
