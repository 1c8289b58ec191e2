"""The TUI with run_test() and Pilot: every ! command, the keys, the log, bad input."""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image
from textual.geometry import Region as ScreenRegion

from viewfinder.core import Region
from viewfinder.core.testing import Canvas, CanvasBackend
from viewfinder.tui import ProcessManager, ProcessStarted
from viewfinder.tui.preview import UPPER_HALF, HalfBlockImage
from viewfinder.tui.testing import (
    SIZE,
    build_app,
    command_value,
    console_text,
    log_lines,
    stable_settings,
    table_cell,
    type_command,
    until,
)

PY = sys.executable


def printer(*lines: str) -> list[str]:
    """``python -c`` printing ``lines`` and staying alive (so it can be killed)."""
    code = f"import time\nfor line in {list(lines)!r}: print(line, flush=True)\ntime.sleep(60)"
    return [PY, "-c", code]


async def test_help_lists_every_command(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!help")
        text = console_text(app)
        for usage in ("!ps", "!logs ID", "!run COMMAND", "!kill ID", "!kill-all", "!shot", "!help"):
            assert usage in text
        assert "[display|browser]" in text


async def test_run_starts_a_process_and_the_log_shows_it(
    processes: ProcessManager, tmp_path: Path
) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!run sh -c 'echo one; echo two'")
        await until(pilot, lambda: log_lines(app) == ["one", "two"], "the output in the log")
        assert "started 1: sh -c echo one; echo two" in console_text(app)
        await until(pilot, lambda: table_cell(app, "p:1", "status") == "exited 0", "the exit")
        assert table_cell(app, "p:1", "output") == "two"
        assert app.log_view.border_title == "log: 1 · sh -c echo one; echo two"


async def test_run_reports_a_missing_program(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!run no-such-program-xyz --flag")
        await until(pilot, lambda: "cannot run 'no-such-program-xyz'" in console_text(app), "err")
        assert processes.list_processes() == []
        await type_command(pilot, "!run 'unclosed")
        assert "close the quote" in console_text(app)


async def test_ps_lists_processes(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!ps")
        assert "no processes yet" in console_text(app)
        command = printer("a")
        first = await processes.spawn(command[0], command[1:], process_id="web")
        await type_command(pilot, "!ps")
        text = console_text(app)
        assert "ID    PID     TIME    STATUS    COMMAND" in text
        assert f"web   {first.pid:<8}0s      running   {PY} -c" in text


async def test_logs_switches_the_log_to_another_process(
    processes: ProcessManager, tmp_path: Path
) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        command = printer("from a")
        await processes.spawn(command[0], command[1:], process_id="a")
        command = printer("from b")
        await processes.spawn(command[0], command[1:], process_id="b")
        await until(pilot, lambda: log_lines(app) == ["from b"], "b's output (newest)")
        await type_command(pilot, "!logs a")
        await until(pilot, lambda: log_lines(app) == ["from a"], "a's output")
        assert app.log_view.process_id == "a"
        assert app.table.highlighted_key == "p:a"


async def test_the_log_follows_new_output(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    code = "import time\nfor i in range(300):\n    print(i, flush=True)\n    time.sleep(0.002)"
    async with app.run_test(size=SIZE) as pilot:
        await processes.spawn(PY, ["-c", code], process_id="counter")
        await until(pilot, lambda: log_lines(app)[-1:] == ["299"], "the last line")
        await pilot.pause()
        log = app.log_view
        assert log_lines(app) == [str(i) for i in range(300)]
        assert log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y


async def test_a_flood_is_batched_and_bounded(processes: ProcessManager, tmp_path: Path) -> None:
    settings = stable_settings(tmp_path, log_lines=500)
    app = build_app(processes, tmp_path, settings=settings)
    code = "import sys\nsys.stdout.write(''.join(f'line {i}\\n' for i in range(200000)))"
    async with app.run_test(size=SIZE) as pilot:
        await processes.spawn(PY, ["-c", code], process_id="flood")
        await until(pilot, lambda: log_lines(app)[-1:] == ["line 199999"], "the flood's end")
        log = app.log_view
        assert log.line_count == 500
        assert log.queued_total == 200000
        # One UI write per tick with whatever arrived, never one per line.
        assert log.flushes * 100 < log.queued_total
        await type_command(pilot, "!help")  # still answering
        assert "!kill-all" in console_text(app)


async def test_kill_and_unknown_ids(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        command = printer("ready")
        await processes.spawn(command[0], command[1:], process_id="job")
        await type_command(pilot, "!kill nope")
        assert "no process with id 'nope'; known ids: job" in console_text(app)
        await type_command(pilot, "!kill job")
        await until(pilot, lambda: "killed job" in console_text(app), "the kill")
        assert not processes.get("job").running
        await until(pilot, lambda: table_cell(app, "p:job", "status") == "killed", "the status")
        await type_command(pilot, "!logs")
        assert "!logs needs an argument: !logs ID" in console_text(app)


async def test_kill_all(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for name in ("a", "b", "c"):
            await processes.spawn("sleep", ["60"], process_id=name)
        await type_command(pilot, "!kill-all")
        await until(pilot, lambda: "killed 3 processes" in console_text(app), "kill-all")
        assert not any(info.running for info in processes.list_processes())


async def test_unknown_commands_and_plain_text(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!kil 3")
        assert "unknown command !kil. Did you mean !kill? Type !help for the list." in (
            console_text(app)
        )
        await type_command(pilot, "!frobnicate")
        assert "unknown command !frobnicate. Type !help" in console_text(app)
        await type_command(pilot, "ls -l")
        assert "'ls -l' is not a command" in console_text(app)
        assert "!run ls -l" in console_text(app)
        await type_command(pilot, "!shot sideways")
        assert "!shot takes display or browser, not 'sideways'" in console_text(app)


async def test_shot_saves_and_previews_the_screen(
    processes: ProcessManager, tmp_path: Path
) -> None:
    canvas = Canvas(80, 40, "white")
    canvas.fill(Region(x=0, y=0, width=40, height=40), (255, 0, 0))
    canvas.fill(Region(x=40, y=0, width=40, height=40), (0, 0, 255))
    app = build_app(processes, tmp_path / "shots", capture=CanvasBackend(canvas))
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!shot")
        await until(pilot, lambda: app.last_shot is not None, "the shot")
        path = app.last_shot
        assert path is not None and path.parent == tmp_path / "shots"
        assert path.name == "shot-20260102-030405-canvas.png"
        with Image.open(path) as saved:
            assert saved.convert("RGB").getpixel((10, 10)) == (255, 0, 0)
            assert saved.convert("RGB").getpixel((70, 30)) == (0, 0, 255)
        assert f"saved {path} (80x40 from canvas)" in console_text(app)
        preview = app.query_one("#shot")
        assert preview.display and isinstance(preview.image, HalfBlockImage)  # type: ignore[attr-defined]
        image = preview.image  # type: ignore[attr-defined]
        assert image.cell_colors(0, 0) == ((255, 0, 0), (255, 0, 0))
        assert image.cell_colors(image.columns - 1, image.rows - 1) == ((0, 0, 255), (0, 0, 255))
        # On screen: the picture's first half block is red on red, its last blue on blue.
        strips = preview.render_lines(ScreenRegion(0, 0, *preview.size))
        blocks = [seg for strip in strips for seg in strip if UPPER_HALF in seg.text]
        colors = [
            (seg.style.color.triplet, seg.style.bgcolor.triplet)  # type: ignore[union-attr]
            for seg in blocks
        ]
        assert colors[0] == ((255, 0, 0), (255, 0, 0))
        assert colors[-1] == ((0, 0, 255), (0, 0, 255))
        await type_command(pilot, "!shot")
        await until(pilot, lambda: app.last_shot != path, "a second shot")
        assert app.last_shot is not None and app.last_shot.name.endswith("-canvas-2.png")


async def test_shot_without_anything_to_capture(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_command(pilot, "!shot")
        await until(pilot, lambda: "no display, browser or backend" in console_text(app), "err")
        await type_command(pilot, "!open https://example.org")
        await until(pilot, lambda: "there is no browser" in console_text(app), "the message")


async def test_key_bindings(processes: ProcessManager, tmp_path: Path) -> None:
    canvas = Canvas(20, 20, "green")
    app = build_app(processes, tmp_path, capture=CanvasBackend(canvas))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert "!kill-all" in console_text(app)
        await pilot.press("f5")
        assert app.query_one("#command").value == "!run "  # type: ignore[attr-defined]
        await pilot.press("s", "l", "e", "e", "p", "space", "6", "0", "enter")
        await until(pilot, lambda: "1" in processes, "the process")
        await processes.spawn("sleep", ["60"], process_id="two")
        await pilot.press("f2")
        assert "running   sleep 60" in console_text(app)
        await until(pilot, lambda: app.table.highlighted_key == "p:two", "the new row")
        await pilot.press("up")  # Up in the command line is its history, not the table
        assert command_value(app) == "!run sleep 60"
        assert app.table.highlighted_key == "p:two"
        await pilot.press("ctrl+up")
        assert app.table.highlighted_key == "p:1"
        await pilot.press("f3")
        assert app.log_view.process_id == "1"
        await pilot.press("f8")
        await until(pilot, lambda: not processes.get("1").running, "F8 to kill 1")
        await pilot.press("ctrl+up")
        assert app.table.highlighted_key == "browser"
        await pilot.press("f8")
        assert "move the cursor to a process row first" in console_text(app)
        await pilot.press("f4")
        await until(pilot, lambda: app.last_shot is not None, "F4's shot")
        await pilot.press("f9")
        await until(pilot, lambda: not processes.get("two").running, "F9 to kill all")


async def test_quit_kills_every_process(processes: ProcessManager, tmp_path: Path) -> None:
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await processes.spawn("sleep", ["60"], process_id="left-running")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not processes.get("left-running").running, "the kill")
    assert not app.is_running


async def test_a_refresh_or_an_event_after_the_widgets_are_gone_does_nothing(
    processes: ProcessManager, tmp_path: Path
) -> None:
    # While the app closes, its widgets go before its timers and workers: a table
    # refresh or a process event then found no table and failed the app.
    app = build_app(processes, tmp_path)
    async with app.run_test(size=SIZE):
        await app.screen.query("*").remove()
        app._refresh_table(force=True)
        app._on_process_event(ProcessStarted("1", 1, "sleep", ("1",), 0.0))
