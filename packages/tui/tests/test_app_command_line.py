"""The command line's shell habits through Pilot: history, Tab completion, log search."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from viewfinder.tui import ProcessManager
from viewfinder.tui.app import ViewfinderApp
from viewfinder.tui.config import parse_config
from viewfinder.tui.history import CommandHistory
from viewfinder.tui.running import run_tui
from viewfinder.tui.testing import (
    SIZE,
    build_app,
    command_value,
    console_text,
    log_lines,
    type_command,
    type_keys,
    until,
)

PY = sys.executable
CONFIG = parse_config("[tui]\ncursor_blink = false\n")


async def test_up_and_down_walk_the_history(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!ps")
        await type_command(pilot, "!help")
        await type_keys(pilot, "!ki")  # typed, not run
        await pilot.press("up")
        assert command_value(app) == "!help"
        assert app.command_input.cursor_position == len("!help")
        await pilot.press("up")
        assert command_value(app) == "!ps"
        await pilot.press("up")  # the oldest: stays
        assert command_value(app) == "!ps"
        await pilot.press("down")
        assert command_value(app) == "!help"
        await pilot.press("down")  # past the newest: what was being typed
        assert command_value(app) == "!ki"
        await pilot.press("down")
        assert command_value(app) == "!ki"
        await pilot.press("up", "enter")  # run a recalled command
        assert console_text(app).count("> !help") == 2
        assert app.history.entries == ("!ps", "!help")
        assert app.focused is app.command_input


async def test_the_history_survives_a_restart(processes: ProcessManager, tmp_path: Path) -> None:
    path = tmp_path / "config" / "history"
    first = build_app(processes, tmp_path, history=CommandHistory.load(path))
    async with first.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!ps")
        await type_command(pilot, "!help")
        await type_command(pilot, " !ps with a secret")  # a leading space: not kept
    assert path.read_text(encoding="utf-8") == "!ps\n!help\n"
    second = build_app(processes, tmp_path, history=CommandHistory.load(path))
    async with second.run_test(size=SIZE) as pilot:
        await pilot.press("up")
        assert command_value(second) == "!help"
        await pilot.press("up")
        assert command_value(second) == "!ps"


async def test_viewfinder_tui_keeps_its_history_in_the_config_folder(config_home: Path) -> None:
    path = config_home / "viewfinder" / "history"
    path.parent.mkdir()
    path.write_text("!help\n", encoding="utf-8")
    seen: dict[str, str] = {}

    async def drive(pilot: Pilot[Any]) -> None:
        await pilot.press("up")
        seen["recalled"] = command_value(pilot.app)  # type: ignore[arg-type]
        await pilot.press("down")
        await type_command(pilot, "!ps")
        await pilot.press("ctrl+q")

    await run_tui(CONFIG, headless=True, auto_pilot=drive, size=SIZE)
    assert seen["recalled"] == "!help"
    assert path.read_text(encoding="utf-8") == "!help\n!ps\n"


async def test_a_corrupt_history_file_does_not_stop_the_tui(config_home: Path) -> None:
    path = config_home / "viewfinder" / "history"
    path.parent.mkdir()
    path.write_bytes(b"!ps\n\xff\xfe\x00 binary junk\n")
    seen: dict[str, str] = {}

    async def drive(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, ViewfinderApp)
        seen["console"] = console_text(app)
        await pilot.press("up")  # nothing to recall
        seen["recalled"] = command_value(app)
        await type_command(pilot, "!ps")
        await pilot.press("ctrl+q")

    await run_tui(CONFIG, headless=True, auto_pilot=drive, size=SIZE)
    assert f"ignored the command history {path}: it is not UTF-8 text" in seen["console"]
    assert seen["recalled"] == ""
    assert path.with_name("history.bad").read_bytes() == b"!ps\n\xff\xfe\x00 binary junk\n"
    assert path.read_text(encoding="utf-8") == "!ps\n"


async def test_tab_completes_command_names(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_keys(pilot, "!ki")
        await pilot.press("tab")
        assert command_value(app) == "!kill "
        assert app.focused is app.command_input  # Tab completed; the focus stayed
        assert console_text(app).splitlines()[-1] == "!kill  !kill-all"
        app.command_input.value = ""
        await type_keys(pilot, "!he")
        await pilot.press("tab")
        assert command_value(app) == "!help "
        await pilot.press("enter")
        assert "!kill-all" in console_text(app)  # the help ran
        await type_keys(pilot, "!zz")
        await pilot.press("tab")
        assert command_value(app) == "!zz" and app.focused is app.command_input
        app.command_input.value = ""
        await pilot.press("tab")  # an empty line: Tab moves the focus as elsewhere
        assert app.focused is not app.command_input


async def test_tab_completes_process_ids(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!run sleep 60")
        await until(pilot, lambda: "1" in processes, "the sleep")
        await type_keys(pilot, "!kill ")
        await pilot.press("tab")
        assert command_value(app) == "!kill 1 "  # the only running process
        app.command_input.value = ""
        await processes.spawn(PY, ["-c", "import time; time.sleep(60)"], process_id="web")
        await processes.spawn(PY, ["-c", "import time; time.sleep(60)"], process_id="worker")
        await processes.spawn("true", process_id="done")
        await processes.wait("done", timeout=30)
        await type_keys(pilot, "!kill w")
        await pilot.press("tab")
        assert command_value(app) == "!kill w"
        assert console_text(app).splitlines()[-1] == "web  worker"
        await pilot.press("e", "tab")
        assert command_value(app) == "!kill web "
        await pilot.press("enter")
        await until(pilot, lambda: not processes.get("web").running, "the kill of web")
        await type_keys(pilot, "!kill d")  # done has ended: nothing to kill
        await pilot.press("tab")
        assert command_value(app) == "!kill d"
        app.command_input.value = ""
        await type_keys(pilot, "!logs d")  # but its log is there
        await pilot.press("tab")
        assert command_value(app) == "!logs done "


SERVER = """
import os, sys, time
print("GET / 200")
print("GET /api 500 Error: boom")
print("\\x1b[31merror\\x1b[0m in red")
print("\\x1b]0;pwned\\x07POST /form 200")
print("warning: ERROR-ish \\x1b]52;c;ZXZpbA==\\x07")
sys.stdout.flush()
for _ in range(3000):  # until the test says so, at most 30 s
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.01)
print("late error", flush=True)
print("late ok", flush=True)
time.sleep(60)
"""


async def test_log_search_shows_only_matching_lines(
    processes: ProcessManager, tmp_path: Path
) -> None:
    flag = tmp_path / "go"
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await processes.spawn(PY, ["-c", SERVER, str(flag)], process_id="srv")
        await until(pilot, lambda: len(log_lines(app)) == 5, "the first lines")
        await type_command(pilot, "!logs srv /error")
        matching = ["GET /api 500 Error: boom", "error in red", "warning: ERROR-ish "]
        assert log_lines(app) == matching
        assert "3 of 5 lines of srv match /error" in console_text(app)
        assert app.log_view.border_subtitle == "/error: 3 lines"
        assert not any("\x1b" in line or "\x07" in line for line in log_lines(app))
        flag.touch()  # new output is searched too
        await until(pilot, lambda: app.log_view.searched_lines == 7, "the late lines searched")
        await until(pilot, lambda: log_lines(app) == [*matching, "late error"], "the late match")
        assert app.log_view.border_subtitle == "/error: 4 lines"
        await type_command(pilot, "!logs srv --case --grep Error")
        assert log_lines(app) == ["GET /api 500 Error: boom"]
        assert "1 of 7 lines of srv match /Error (exact case)" in console_text(app)
        await type_command(pilot, "!logs srv --grep 'GET /'")
        assert log_lines(app) == ["GET / 200", "GET /api 500 Error: boom"]
        await type_command(pilot, "!logs srv /no such text")
        assert log_lines(app) == []
        assert "0 of 7 lines of srv match /no such text" in console_text(app)
        await type_command(pilot, "!logs srv")  # no search: every line again
        await until(pilot, lambda: len(log_lines(app)) == 7, "every line")
        assert app.log_view.border_subtitle is None
        assert log_lines(app)[3] == "POST /form 200"
        await type_command(pilot, "!logs srv --frob")
        assert "!logs takes ID, then /TEXT or --grep TEXT" in console_text(app)
        await pilot.press("ctrl+f")  # a search of the log shown, to type
        assert command_value(app) == "!logs srv /"
        assert app.focused is app.command_input
