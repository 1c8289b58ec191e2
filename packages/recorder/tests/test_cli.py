"""``viewfinder record``, ``record show`` and ``record export``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core import Trajectory
from viewfinder.core.testing import Canvas
from viewfinder.recorder import Recorder
from viewfinder.xvfb import Display

runner = CliRunner()


def invoke(*args: str) -> Any:
    return runner.invoke(build_app(), list(args))


@pytest.fixture
def recorded(tmp_path: Path, canvas_backend: Canvas) -> Path:
    folder = tmp_path / "session"
    with Recorder(folder, "canvas") as recorder:
        recorder.click(10, 20)
        recorder.type("hello")
        recorder.key("ctrl+s")
        recorder.scroll(5, 6, dy=2)
    return folder


def test_show_lists_events_with_their_frames(recorded: Path) -> None:
    result = invoke("record", "show", str(recorded))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"{recorded}: 640x480 via canvas, input programmatic, 4 events")
    assert "click (10, 20)" in lines[2] and lines[2].endswith(f"{recorded}/screenshots/0.png")
    assert "type 'hello'" in lines[3]
    assert "key ctrl+s" in lines[4]
    assert "scroll (5, 6) dx=0 dy=2" in lines[5]
    (recorded / "screenshots" / "3.png").unlink()
    as_json = invoke("record", "show", str(recorded), "--json")
    rows = [json.loads(line) for line in as_json.output.splitlines()]
    assert [(row["seq"], row["kind"], row["frame_exists"]) for row in rows] == [
        (0, "click", True),
        (1, "type", True),
        (2, "key", True),
        (3, "scroll", False),
    ]


def test_export_writes_a_trajectory_or_ai_mime_lines(recorded: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "trajectory.json"
    result = invoke("record", "export", str(recorded), "-o", str(target))
    assert result.exit_code == 0, result.output
    assert "wrote 4 steps" in result.output
    trajectory = Trajectory.model_validate_json(target.read_text())
    assert [step.event.kind.value for step in trajectory.steps] == [
        "click",
        "type",
        "key",
        "scroll",
    ]
    assert all(step.frame is not None for step in trajectory.steps)
    bare = invoke("record", "export", str(recorded), "-o", "-", "--no-frames")
    assert all(step.frame is None for step in Trajectory.model_validate_json(bare.output).steps)
    lines = invoke("record", "export", str(recorded), "-o", "-", "--format", "ai-mime").output
    assert [json.loads(line)["action_type"] for line in lines.splitlines()] == [
        "click",
        "type",
        "key",
        "scroll",
    ]


def test_recording_from_the_command_line_and_its_errors(
    tmp_path: Path, canvas_backend: Canvas
) -> None:
    folder = tmp_path / "s"
    args = ["record", "--backend", "canvas", "--input", "programmatic", "--out", str(folder)]
    result = invoke(*args, "--duration", "0.2", "--interval", "0.05")
    assert result.exit_code == 0, result.output
    assert "recording canvas into" in result.output
    assert "recorded 0 events (none)" in result.output
    again = invoke(*args, "--duration", "0")
    assert again.exit_code == 1
    assert "already holds a recording (0 events)" in again.output
    assert invoke(*args, "--duration", "0", "--resume").exit_code == 0
    unknown = invoke("record", "--backend", "nope", "--out", str(tmp_path / "t"))
    assert unknown.exit_code == 1 and "unknown capture backend 'nope'" in unknown.output
    source = invoke("record", "--input", "telepathy", "--out", str(tmp_path / "u"))
    assert source.exit_code == 1 and "unknown input source 'telepathy'" in source.output
    missing = invoke("record", "show", str(tmp_path / "nowhere"))
    assert missing.exit_code == 1 and "is not a folder" in missing.output


def test_ctrl_c_stops_a_real_recording_and_prints_a_summary(
    tmp_path: Path, display: Display, xdotool: Callable[..., None], wait_until: Callable[..., Any]
) -> None:
    folder = tmp_path / "s"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "viewfinder.cli",
            "record",
            "--display",
            display.name,
            "--out",
            str(folder),
            "--interval",
            "0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "press Ctrl-C to stop" in banner and "input: x11" in banner
        xdotool("mousemove", "30", "40", "click", "3")
        assert "right_click (30, 40)" in process.stdout.readline()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait(10)
    assert process.returncode == 0, err
    assert "recorded 1 events (1 right_click)" in out
    assert json.loads((folder / "metadata.json").read_text())["status"] == "stopped"


def test_a_folder_with_other_files_is_refused_and_left_as_it_was(
    tmp_path: Path, canvas_backend: Canvas
) -> None:
    folder = tmp_path / "photos"
    (folder / "screenshots").mkdir(parents=True)
    mine = b"\x89PNG the user's own picture"
    (folder / "screenshots" / "0.png").write_bytes(mine)
    args = ["record", "--backend", "canvas", "--input", "programmatic", "--out", str(folder)]
    for extra in ([], ["--resume"]):
        refused = invoke(*args, "--duration", "0", *extra)
        assert refused.exit_code == 1, refused.output
        assert "is not empty (screenshots) and holds no recording" in refused.output
    assert (folder / "screenshots" / "0.png").read_bytes() == mine
    assert sorted(path.name for path in folder.rglob("*")) == ["0.png", "screenshots"]


def test_a_dead_display_touches_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "never"
    result = invoke("record", "--display", ":987", "--input", "x11", "--out", str(folder))
    assert result.exit_code == 1 and ":987" in result.output, result.output
    assert not folder.exists()
