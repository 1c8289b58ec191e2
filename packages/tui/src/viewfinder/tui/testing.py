"""Helpers for driving the TUI in tests (``App.run_test()`` and Pilot).

Build a stable app (fixed clock, no blinking cursor, no PID column), type commands,
wait for conditions with a deadline, read what the console and the log show::

    async with build_app(processes, tmp_path).run_test(size=SIZE) as pilot:
        await type_command(pilot, "!run echo hi")
        await until(pilot, lambda: "hi" in log_lines(pilot.app), "the output")

``build_app`` keeps the command history in memory unless given ``history=``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, RichLog

from viewfinder.tui.app import ViewfinderApp, create_app
from viewfinder.tui.config import TuiSettings
from viewfinder.tui.processes import ProcessManager

#: The time every test app and manager believes it is: running times and shot names
#: stay the same from run to run.
FIXED_NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
STABLE_COLUMNS = ("id", "command", "time", "status", "output")
SIZE = (120, 36)
DEADLINE = 30.0


def fixed_clock() -> datetime:
    """A clock that always says :data:`FIXED_NOW`."""
    return FIXED_NOW


def stable_settings(shots_dir: Path, **changes: Any) -> TuiSettings:
    """Settings for tests: no blinking cursor; PIDs hidden unless asked for."""
    values: dict[str, Any] = {
        "cursor_blink": False,
        "columns": STABLE_COLUMNS,
        "shots_dir": shots_dir,
        "refresh_interval": 0.02,
        "kill_timeout": 2.0,
    }
    values.update(changes)
    return TuiSettings(**values)


def build_app(processes: ProcessManager, shots_dir: Path, **options: Any) -> ViewfinderApp:
    """An app over ``processes`` with :func:`stable_settings` and the fixed clock."""
    settings = options.pop("settings", None) or stable_settings(shots_dir)
    return create_app(processes=processes, settings=settings, clock=fixed_clock, **options)


async def until(pilot: Pilot[Any], predicate: Callable[[], object], what: str) -> None:
    """Let the app run until ``predicate()`` is true; fail naming ``what`` at the deadline."""
    waited = 0.0
    while not predicate():
        if waited > DEADLINE:
            raise AssertionError(f"timed out after {DEADLINE:g}s waiting for {what}")
        await pilot.pause(0.02)
        waited += 0.02


async def type_keys(pilot: Pilot[Any], text: str) -> None:
    """Type ``text`` into the command line key by key, without pressing enter."""
    pilot.app.query_one("#command", Input).focus()
    await pilot.press(*text)


def command_value(app: ViewfinderApp) -> str:
    """What the command line holds."""
    return app.command_input.value


async def type_command(pilot: Pilot[Any], line: str) -> None:
    """Type ``line`` into the command line and press enter."""
    command = pilot.app.query_one("#command", Input)
    command.focus()
    command.value = line
    await pilot.press("enter")
    await pilot.pause()


def console_text(app: ViewfinderApp) -> str:
    """What was written to the console, as plain text, one message per line (unwrapped)."""
    return "\n".join(app.transcript)


def console_screen_text(app: ViewfinderApp) -> str:
    """What the console widget holds, wrapped as on screen."""
    return "\n".join(strip.text.rstrip() for strip in app.query_one("#console", RichLog).lines)


def log_lines(app: ViewfinderApp) -> list[str]:
    """The lines the log view holds."""
    return list(app.log_view.lines)


def table_cell(app: ViewfinderApp, row_key: str, column: str) -> str:
    """The text of one cell of the process table (process rows are keyed ``p:<id>``)."""
    return str(app.table.get_cell(row_key, column))
