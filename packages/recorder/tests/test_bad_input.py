"""Bad input: folders that cannot be written or fill up, a display that goes away.

Each must give a clear error and leave what was recorded before it intact. A full and a
read-only disk are real tmpfs mounts when the tests run as root (as in CI here); for
anyone else they fall back to a permission-less folder and a fault-injecting writer.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from viewfinder.core import DisplayGoneError
from viewfinder.recorder import (
    Recorder,
    RecordingFailedError,
    SessionWriteError,
    X11RecordInput,
    durable,
    load_session,
    manifest,
    read_session,
)
from viewfinder.xvfb import Display


def can_mount() -> bool:
    return os.geteuid() == 0


@contextlib.contextmanager
def tmpfs(path: Path, options: str) -> Iterator[Path]:
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on a disk with about 200 KB free."""
    if can_mount():
        with tmpfs(tmp_path / "small", "size=200k") as mounted:
            yield mounted
        return
    budget = [200_000]
    real = durable.write_whole

    def budgeted(fd: int, data: bytes) -> None:
        if len(data) > budget[0]:
            raise OSError(errno.ENOSPC, "No space left on device")
        budget[0] -= len(data)
        real(fd, data)

    monkeypatch.setattr(durable, "write_whole", budgeted)
    monkeypatch.setattr(manifest, "write_whole", budgeted)
    (tmp_path / "small").mkdir()
    yield tmp_path / "small"


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    if can_mount():
        with tmpfs(tmp_path / "ro", "size=1m,ro") as mounted:
            yield mounted
        return
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    yield folder
    folder.chmod(0o700)


def whole_session(folder: Path) -> int:
    """Every line parses and every frame it names decodes; returns the number of events."""
    session = read_session(folder)
    assert session.torn_bytes == 0
    for entry in session.entries:
        path = session.frame_path(entry)
        assert path is not None
        with Image.open(path) as image:
            image.load()
    return len(session.entries)


def test_a_full_disk_stops_the_recording_with_what_was_written_intact(
    small_disk: Path, display: Display, form: Any
) -> None:
    folder = small_disk / "session"
    recorder = Recorder(folder, "xvfb", backend_options={"display": display.name}).start()
    error: Exception | None = None
    for n in range(5000):
        try:
            recorder.click(n % 600, 40)
        except (SessionWriteError, RecordingFailedError) as exc:
            error = exc
            break
    summary = recorder.stop()
    assert error is not None, "the disk never filled up"
    cause = error.cause if isinstance(error, RecordingFailedError) else error
    assert isinstance(cause, SessionWriteError)
    assert "the disk is full; free some space or record to another folder" in str(cause)
    assert summary.error is not None and "disk is full" in summary.error
    with pytest.raises(RecordingFailedError, match="earlier error"):
        recorder.click(1, 1)
    assert whole_session(folder) == summary.events > 0


def test_an_unwritable_folder_is_refused_at_start(
    tmp_path: Path, read_only_folder: Path, display: Display
) -> None:
    options = {"display": display.name}
    with pytest.raises(SessionWriteError, match=r"cannot write .*/ro/s: .*(read-only|denied)"):
        Recorder(read_only_folder / "s", "xvfb", backend_options=options).start()
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    with pytest.raises(SessionWriteError, match="check that the session folder path is a folder"):
        Recorder(a_file / "s", "xvfb", backend_options=options).start()


def test_a_display_that_goes_away_stops_the_recording_cleanly(
    tmp_path: Path, wait_until: Callable[..., Any]
) -> None:
    folder = tmp_path / "session"
    with Display(320, 240) as doomed:
        recorder = Recorder(
            folder,
            "xvfb",
            backend_options={"display": doomed.name},
            input_source=X11RecordInput(doomed.name),
            interval=0.05,
        ).start()
        recorder.click(10, 10)
        subprocess.run(["xdotool", "key", "Escape"], env=doomed.env(), check=True, timeout=20)
        wait_until(lambda: recorder.events == 2, "the Escape key from the listener")
        recorder.type("half a wor")  # pending when the display dies
    # The display has stopped (the `with` ended): the recorder notices by itself.
    assert recorder.wait(30)
    assert isinstance(recorder.error, DisplayGoneError)
    assert doomed.name in str(recorder.error)
    with pytest.raises(RecordingFailedError, match="earlier error"):
        recorder.click(5, 5)
    summary = recorder.stop()
    assert summary.error is not None and doomed.name in summary.error
    trajectory = load_session(folder)
    assert [step.event.kind.value for step in trajectory.steps] == ["click", "key", "type"]
    assert trajectory.steps[2].event.text == "half a wor"
    assert whole_session(folder) == 3
    assert read_session(folder).metadata.status == "failed"
