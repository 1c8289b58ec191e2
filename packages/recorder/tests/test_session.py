"""Reading sessions back: load_session -> Trajectory, and folders that are not sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viewfinder.core import EventKind, Region, Trajectory
from viewfinder.core.testing import Canvas
from viewfinder.recorder import Recorder, SessionFormatError, load_session, read_session


@pytest.fixture
def recorded(tmp_path: Path, canvas_backend: Canvas) -> Path:
    folder = tmp_path / "session"
    with Recorder(folder, "canvas") as recorder:
        canvas_backend.fill(Region(x=0, y=0, width=640, height=480), "red")
        recorder.frames.refresh()
        recorder.click(10, 20)
        recorder.type("hello")
        recorder.key("ctrl+s")
    return folder


def test_a_session_loads_as_a_trajectory_with_its_pre_action_frames(recorded: Path) -> None:
    trajectory = load_session(recorded)
    assert isinstance(trajectory, Trajectory)
    assert [step.event.kind for step in trajectory.steps] == [
        EventKind.CLICK,
        EventKind.TYPE,
        EventKind.KEY,
    ]
    meta = trajectory.metadata
    assert meta.source == "recorder"
    assert meta.screen is not None and (meta.screen.width, meta.screen.height) == (640, 480)
    extra = meta.model_dump()
    assert (extra["backend"], extra["input_source"], extra["status"]) == (
        "canvas",
        "programmatic",
        "stopped",
    )
    assert extra["session_dir"] == str(recorded)
    for step in trajectory.steps:
        frame = step.frame
        assert frame is not None and frame.format == "png"
        assert (frame.width, frame.height) == (640, 480)
        assert frame.data == (recorded / (step.event.screenshot or "")).read_bytes()
        # captured before the action it goes with
        assert frame.captured_at <= step.event.timestamp
    # A Trajectory round-trips through JSON with its frames.
    again = Trajectory.model_validate_json(trajectory.model_dump_json())
    assert again.steps[0].frame == trajectory.steps[0].frame
    assert load_session(recorded, frames=False).steps[0].frame is None


def test_a_missing_frame_is_named(recorded: Path) -> None:
    (recorded / "screenshots" / "1.png").unlink()
    assert [entry.seq for entry in read_session(recorded).missing_frames()] == [1]
    with pytest.raises(SessionFormatError, match=r"line 2 \(seq 1\) names screenshots/1.png"):
        load_session(recorded)


def test_folders_that_are_not_recordings_are_refused(tmp_path: Path, recorded: Path) -> None:
    with pytest.raises(SessionFormatError, match="not a folder"):
        load_session(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SessionFormatError, match=r"no manifest\.jsonl"):
        load_session(tmp_path / "empty")
    (recorded / "metadata.json").write_text("{}")
    with pytest.raises(SessionFormatError, match="not valid recording metadata"):
        load_session(recorded)


def test_a_bad_line_is_named_and_a_torn_last_line_is_left_out(recorded: Path) -> None:
    manifest = recorded / "manifest.jsonl"
    good = manifest.read_bytes()
    manifest.write_bytes(good + b'{"seq": 3, "kind": "cli')  # a power cut mid-line
    session = read_session(recorded)
    assert (len(session.entries), session.torn_bytes) == (3, len(b'{"seq": 3, "kind": "cli'))
    lines = good.decode().splitlines()
    lines[1] = json.dumps({"seq": 1, "kind": "warp"})
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionFormatError, match="line 2"):
        load_session(recorded)
    lines[1] = "not json"
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionFormatError, match="line 2 is not JSON"):
        load_session(recorded)
    lines[1] = json.dumps(
        {"seq": 0, "kind": "key", "keys": ["a"], "timestamp": "2025-01-01T00:00:00Z"}
    )
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionFormatError, match="seq 0 after seq 0"):
        load_session(recorded)
