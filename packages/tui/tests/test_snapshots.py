"""Snapshots of the TUI's main screen (pytest-textual-snapshot).

Stable by construction: a fixed clock (running times read "0s"), no PID column, no
blinking cursor, processes that end before the picture is taken, and shots saved under
a relative folder so no temporary path shows. Update after a deliberate change with
``uv run pytest packages/tui/tests/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from viewfinder.core import Region
from viewfinder.core.testing import Canvas, CanvasBackend
from viewfinder.tui import ProcessManager
from viewfinder.tui.process_groups import group_members
from viewfinder.tui.testing import (
    SIZE,
    build_app,
    fixed_clock,
    log_lines,
    stable_settings,
    type_command,
    until,
)

SnapCompare = Callable[..., bool]


async def two_finished_processes(pilot: Pilot[Any]) -> None:
    """A build that succeeded and a check that failed, then the build's log."""
    processes: ProcessManager = pilot.app.processes  # type: ignore[attr-defined]
    await processes.spawn(
        "sh", ["-c", "echo compiling...; echo linking...; echo build ok"], process_id="build"
    )
    await processes.wait("build", timeout=30)
    await processes.spawn(
        "sh", ["-c", "echo 3 checks; echo 1 failed >&2; exit 3"], process_id="check"
    )
    await processes.wait("check", timeout=30)
    await type_command(pilot, "!logs build")
    await until(pilot, lambda: log_lines(pilot.app)[-1:] == ["build ok"], "the build's log")  # type: ignore[arg-type]


def assert_nothing_left(processes: ProcessManager) -> None:
    for info in processes.list_processes():
        assert not info.running and group_members(info.pid) == []


def test_main_screen(snap_compare: SnapCompare, tmp_path: Path) -> None:
    processes = ProcessManager(clock=fixed_clock)
    app = build_app(processes, tmp_path)
    assert snap_compare(app, terminal_size=SIZE, run_before=two_finished_processes)
    assert_nothing_left(processes)


def test_help_and_a_shot(
    snap_compare: SnapCompare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    canvas = Canvas(160, 90, "white")
    canvas.fill(Region(x=0, y=0, width=80, height=45), (220, 40, 40))
    canvas.fill(Region(x=80, y=45, width=80, height=45), (40, 90, 220))
    processes = ProcessManager(clock=fixed_clock)
    settings = stable_settings(Path("shots"))
    app = build_app(processes, Path("shots"), settings=settings, capture=CanvasBackend(canvas))

    async def help_then_shot(pilot: Pilot[Any]) -> None:
        await two_finished_processes(pilot)
        await type_command(pilot, "!help")
        await type_command(pilot, "!shot")
        await until(pilot, lambda: app.last_shot is not None, "the shot")

    assert snap_compare(app, terminal_size=SIZE, run_before=help_then_shot)
    assert (tmp_path / "shots" / "shot-20260102-030405-canvas.png").is_file()
    assert_nothing_left(processes)
