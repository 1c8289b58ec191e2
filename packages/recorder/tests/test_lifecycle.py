"""Starting, stopping, refusing and resuming recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viewfinder.core import UnknownBackendError
from viewfinder.core.testing import Canvas
from viewfinder.recorder import (
    InputSourceError,
    Recorder,
    RecorderError,
    RecorderStateError,
    SessionBusyError,
    SessionExistsError,
    load_session,
)


def test_stopping_twice_returns_the_same_summary(tmp_path: Path, canvas_backend: Canvas) -> None:
    recorder = Recorder(tmp_path / "s", "canvas").start()
    recorder.click(1, 2)
    recorder.type("ab")
    first = recorder.stop()
    assert recorder.stop() is first
    assert (first.events, first.total_events, first.counts) == (2, 2, {"click": 1, "type": 1})
    assert first.error is None and not first.resumed
    assert "recorded 2 events (1 click, 1 type)" in str(first)
    assert not recorder.running


def test_misuse_says_what_to_do(tmp_path: Path, canvas_backend: Canvas) -> None:
    recorder = Recorder(tmp_path / "s", "canvas")
    with pytest.raises(RecorderStateError, match="never started"):
        recorder.stop()
    with pytest.raises(RecorderStateError, match="call start"):
        recorder.click(1, 1)
    recorder.start()
    with pytest.raises(RecorderStateError, match="records once"):
        recorder.start()
    recorder.stop()
    with pytest.raises(RecorderStateError, match="has stopped"):
        recorder.type("late")
    with pytest.raises(RecorderStateError, match="records once"):
        recorder.start()
    with pytest.raises(ValueError, match="positive"):
        Recorder(tmp_path / "t", "canvas", interval=0)
    with Recorder(tmp_path / "u", "canvas") as other, pytest.raises(ValueError, match="button"):
        other.click(1, 1, button="fourth")


def test_a_folder_holding_a_recording_is_refused_unless_resumed(
    tmp_path: Path, canvas_backend: Canvas
) -> None:
    folder = tmp_path / "s"
    with Recorder(folder, "canvas") as recorder:
        recorder.click(1, 1)
        recorder.key("Return")
    with pytest.raises(SessionExistsError, match=r"already holds a recording \(2 events\)"):
        Recorder(folder, "canvas").start()
    with Recorder(folder, "canvas", resume=True) as recorder:
        recorder.key("Escape")
    summary = recorder.stop()
    assert (summary.events, summary.total_events, summary.resumed) == (1, 3, True)
    trajectory = load_session(folder)
    assert [step.event.screenshot for step in trajectory.steps] == [
        "screenshots/0.png",
        "screenshots/1.png",
        "screenshots/2.png",
    ]
    metadata = json.loads((folder / "metadata.json").read_text())
    assert [(run["first_seq"], run["events"]) for run in metadata["runs"]] == [(0, 2), (2, 1)]
    assert (metadata["events"], metadata["status"]) == (3, "stopped")


def test_two_recorders_cannot_share_a_folder(tmp_path: Path, canvas_backend: Canvas) -> None:
    with (
        Recorder(tmp_path / "s", "canvas"),
        pytest.raises(SessionBusyError, match=r"another recorder \(pid \d+\)"),
    ):
        Recorder(tmp_path / "s", "canvas", resume=True).start()


def test_an_unknown_backend_is_a_clear_error_and_touches_nothing(
    tmp_path: Path, canvas_backend: Canvas
) -> None:
    with pytest.raises(UnknownBackendError, match="unknown capture backend 'nope'"):
        Recorder(tmp_path / "fresh", "nope").start()
    assert not (tmp_path / "fresh").exists()
    folder = tmp_path / "s"
    with Recorder(folder, "canvas") as recorder:
        recorder.click(5, 5)
    before = {path.name: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    with pytest.raises(UnknownBackendError):
        Recorder(folder, "nope", resume=True).start()
    after = {path.name: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    assert after == before


def test_resuming_on_a_screen_of_another_size_is_refused(tmp_path: Path, viewfinder_plugin) -> None:
    from viewfinder.core.testing import CanvasPlugin

    folder = tmp_path / "s"
    viewfinder_plugin(CanvasPlugin(Canvas(640, 480)), name="small-canvas")
    with Recorder(folder, "canvas") as recorder:
        recorder.click(1, 1)
    from viewfinder.core import unregister_plugin

    unregister_plugin("small-canvas")
    viewfinder_plugin(CanvasPlugin(Canvas(800, 600)), name="big-canvas")
    with pytest.raises(RecorderError, match="640x480 screen, this one is 800x600"):
        Recorder(folder, "canvas", resume=True).start()


def test_metadata_says_what_where_and_when(tmp_path: Path, canvas_backend: Canvas) -> None:
    folder = tmp_path / "s"
    recorder = Recorder(folder, "canvas", interval=0.25).start()
    during = json.loads((folder / "metadata.json").read_text())
    assert during["status"] == "recording" and during["stopped_at"] is None
    recorder.stop()
    metadata = json.loads((folder / "metadata.json").read_text())
    assert metadata["screen"] == {"width": 640, "height": 480}
    assert (metadata["backend"], metadata["input_source"]) == ("canvas", "programmatic")
    assert metadata["interval_s"] == 0.25
    assert metadata["started_at"] <= metadata["stopped_at"]
    assert metadata["status"] == "stopped"
    assert {"system", "machine", "python", "hostname"} <= set(metadata["platform"])


class BrokenSource:
    """An input source that cannot listen (as X11 on a display without RECORD)."""

    name = "broken"

    def start(self, sink: object) -> None:
        raise InputSourceError("this source cannot listen here")

    def stop(self) -> None:
        pass


def test_a_source_that_cannot_start_leaves_no_recording_behind(
    tmp_path: Path, canvas_backend: Canvas
) -> None:
    folder = tmp_path / "s"
    with pytest.raises(InputSourceError, match="cannot listen"):
        Recorder(folder, "canvas", input_source=BrokenSource()).start()
    assert not folder.exists()
    with Recorder(folder, "canvas") as recorder:  # so trying again needs no --resume
        recorder.click(1, 1)
    with pytest.raises(InputSourceError):
        Recorder(folder, "canvas", input_source=BrokenSource(), resume=True).start()
    assert len(load_session(folder)) == 1  # an existing recording is never removed
