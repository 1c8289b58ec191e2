"""`viewfinder desktop`: start, list, act, stop — in process, and as real commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core import Screenshot
from viewfinder.core.testing import processes_with_argument, running, wait_until
from viewfinder.desktop import state
from viewfinder.xvfb import registry
from viewfinder.xvfb.testing import socket_left

runner = CliRunner()
GREY = (128, 128, 128)


def invoke(*args: str) -> Any:
    return runner.invoke(build_app(), list(args))


@pytest.fixture(autouse=True)
def state_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv(registry.STATE_DIR_ENV, str(folder))
    monkeypatch.delenv("DISPLAY", raising=False)
    return folder


@pytest.fixture
def started(tmp_path: Path, form_app: Callable[..., list[str]]) -> Iterator[tuple[str, Path]]:
    """A desktop started with `viewfinder desktop start -- <form>`; stopped afterwards."""
    form_state = tmp_path / "form.json"
    result = invoke("desktop", "start", "--size", "800x600", "--", *form_app(form_state))
    assert result.exit_code == 0, result.output
    name = result.output.strip().removeprefix("export DISPLAY=")
    try:
        yield name, form_state
    finally:
        if state.find_desktop(name) is not None:
            state.stop_desktop(name)


def test_start_act_list_and_stop_a_desktop(
    started: tuple[str, Path], tmp_path: Path, form_state: Callable[[Path], Any]
) -> None:
    name, form = started
    record = state.find_desktop(name)
    assert record is not None and record.size == "800x600"
    [app] = record.apps
    assert running(app.pid) and processes_with_argument(str(form))
    layout = wait_until(lambda: form_state(form).get("layout"), "the form drawn")

    listed = invoke("desktop", "list")
    assert listed.exit_code == 0
    rows = [line.split() for line in listed.output.splitlines()]
    assert rows[0] == ["DISPLAY", "SIZE", "ALIVE", "APPS", "STARTED"]
    assert rows[1][:5] == [name, "800x600", "yes", "1/1", "running"]
    assert str(form) in listed.output
    [as_json] = json.loads(invoke("desktop", "list", "--json").output)
    assert as_json["name"] == name and as_json["running_apps"] == 1

    x, y, width, height = layout["button"]
    shot = tmp_path / "after.png"
    click = json.dumps({"action": "left_click", "coordinate": [x + width // 2, y + height // 2]})
    acted = invoke("desktop", "act", click, "--display", name, "-o", str(shot))
    assert acted.exit_code == 0, acted.output
    assert f"wrote {shot} (800x600)" in acted.output
    wait_until(lambda: form_state(form)["swatch"]["clicks"] == 1, "the Apply click")
    sx, sy, sw, sh = layout["swatch"]
    assert Screenshot.from_file(shot).pixel(sx + sw // 2, sy + sh // 2) != GREY

    # OpenAI's shape, coordinates of a 400x300 image of the 800x600 screen
    again = json.dumps(
        {"type": "click", "button": "left", "x": (x + width // 2) // 2, "y": (y + height // 2) // 2}
    )
    scaled = invoke(
        "desktop", "act", again, "--display", name, "--target", "400x300", "-o", str(shot)
    )
    assert scaled.exit_code == 0, scaled.output
    wait_until(lambda: form_state(form)["swatch"]["clicks"] == 2, "the second click")
    assert Screenshot.from_file(shot).size == (400, 300)

    stopped = invoke("desktop", "stop", name)
    assert stopped.exit_code == 0, stopped.output
    assert stopped.output.strip() == f"stopped {name} and its 1 app"
    assert not processes_with_argument(str(form)) and not running(app.pid)
    assert state.find_desktop(name) is None and registry.find_display(name) is None
    assert not Path(record.folder).exists()
    assert "no desktops" in invoke("desktop", "list").output


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("{not json", "the action is not JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"action": "fly"}', "action"),
        ('{"action": "left_click", "coordinate": [10]}', "coordinate"),
        ('{"type": "click", "x": 1}', "y"),
    ],
)
def test_a_bad_action_is_one_line_and_exit_status_2(
    started: tuple[str, Path], action: str, message: str
) -> None:
    name, _ = started
    result = invoke("desktop", "act", action, "--display", name)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert "Traceback" not in result.output
    # the desktop still works after it
    ok = invoke("desktop", "act", '{"action": "screenshot"}', "--display", name)
    assert ok.exit_code == 0, ok.output
    assert ok.output.strip() == "screenshot 800x600 PNG, the screen at full size"


def test_a_bad_target_is_bad_input(started: tuple[str, Path]) -> None:
    name, _ = started
    bad = invoke("desktop", "act", '{"action": "screenshot"}', "-d", name, "--target", "VGA")
    assert bad.exit_code == 2 and "unknown scaling target 'VGA'" in bad.output
    auto = invoke("desktop", "act", '{"action": "screenshot"}', "-d", name, "--target", "auto")
    assert auto.exit_code == 0, auto.output


def test_usage_errors_say_what_to_do() -> None:
    no_display = invoke("desktop", "act", '{"action": "screenshot"}')
    assert no_display.exit_code == 2 and "pass --display :N" in no_display.output
    bad_size = invoke("desktop", "start", "--size", "huge")
    assert bad_size.exit_code == 2 and "not WIDTHxHEIGHT" in bad_size.output
    unknown = invoke("desktop", "stop", ":987")
    assert unknown.exit_code == 1 and "no desktop :987" in unknown.output
    neither = invoke("desktop", "stop")
    assert neither.exit_code == 1 and "--all" in neither.output
    gone = invoke("desktop", "act", '{"action": "screenshot"}', "-d", ":987")
    assert gone.exit_code == 1 and ":987" in gone.output and "Traceback" not in gone.output


def test_a_program_that_is_not_installed_starts_nothing(state_folder: Path) -> None:
    result = invoke("desktop", "start", "--", "viewfinder-no-such-app", "-x")
    assert result.exit_code == 1
    assert "viewfinder-no-such-app -x" in result.output and "no program" in result.output
    assert registry.list_displays() == [] and state.list_desktops() == []


def test_an_app_that_fails_stops_the_display_it_started(state_folder: Path) -> None:
    result = invoke("desktop", "start", "--", sys.executable, "-c", "raise SystemExit(4)")
    assert result.exit_code == 1 and "exited with code 4" in result.output
    assert registry.list_displays() == [] and state.list_desktops() == []


def test_a_desktop_outlives_the_command_and_stop_leaves_nothing_running(
    tmp_path: Path,
    state_folder: Path,
    form_app: Callable[..., list[str]],
    form_state: Callable[[Path], Any],
) -> None:
    form = tmp_path / "form.json"
    env = {**os.environ, registry.STATE_DIR_ENV: str(state_folder)}
    cli = [sys.executable, "-m", "viewfinder.cli", "desktop"]
    shell = f"sleep 1007.51 & exec {' '.join(form_app(form))}"
    start = subprocess.run(
        [*cli, "start", "--size", "640x480", "--app", f"sh -c '{shell}'", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert start.returncode == 0, start.stderr
    record = json.loads(start.stdout)
    name = record["name"]
    try:
        # the command has exited; its display, the form and the shell's child run on
        xvfb = registry.find_display(name)
        assert xvfb is not None and running(xvfb.pid)
        assert processes_with_argument(str(form)) and processes_with_argument("1007.51")
        wait_until(lambda: form_state(form).get("layout"), "the form drawn")
    finally:
        stop = subprocess.run(
            [*cli, "stop", name], env=env, capture_output=True, text=True, timeout=120
        )
    assert stop.returncode == 0, stop.stderr
    assert stop.stdout.strip() == f"stopped {name} and its 1 app"
    assert not processes_with_argument(str(form))
    assert not processes_with_argument("1007.51")
    assert not running(xvfb.pid) and not socket_left(xvfb.number)
    assert not list(state_folder.glob("desktop-*"))
