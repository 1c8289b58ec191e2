"""Videos that survive SIGKILL: `record --video` and `exec` with start_recording(), killed
at random moments (seeded), each leave an MP4 that ffprobe plays, as long as the
recording lasted (within a second), named where the viewer looks and shown by it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from viewfinder.core.testing import processes_marked, wait_until
from viewfinder.viewer import ViewerServer, ViewerSettings
from viewfinder.xvfb import Display

KILLS_EACH = 10
AT_ONCE = 3
MARK = "VIEWFINDER_KILLED_VIDEO_TEST"
T = TypeVar("T")
RECORDING_SCRIPT = "import time\nstart_recording()\ntime.sleep(120)\n"


def viewfinder() -> str:
    return str(Path(sys.executable).with_name("viewfinder"))


def duration_of(path: Path) -> float:
    """The video's duration as ffprobe reads it (fails when the file does not play)."""
    result = subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-show_entries",
         "format=duration:stream=codec_name,nb_read_frames", "-of", "json", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, f"{path} does not play: {result.stderr}"
    data = json.loads(result.stdout)
    assert data["streams"][0]["codec_name"] == "h264"
    assert int(data["streams"][0]["nb_read_frames"]) > 0
    return float(data["format"]["duration"])


@pytest.fixture
def mark() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def display() -> Iterator[Display]:
    with Display(640, 480) as started:
        yield started


def kill_once_started(
    command: list[str], mark: str, started: Callable[[], T | None], what: str, delay: float
) -> tuple[T, float]:
    """Run ``command``; once ``started()`` returns something, wait ``delay`` s and kill it
    with SIGKILL. Returns what ``started()`` returned and the wall clock at the kill."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, MARK: mark},
    )  # fmt: skip
    try:
        # polled often: the video's start is taken from the moment this returns
        found: T = wait_until(started, what, timeout=90, max_interval=0.01)
        time.sleep(delay)
        os.kill(process.pid, signal.SIGKILL)
        return found, time.time()
    finally:
        process.kill()
        process.wait(10)


def kill_record(folder: Path, display: Display, delay: float, mark: str) -> tuple[Path, float]:
    """`viewfinder record --video` killed ``delay`` s after its video started: (file, lasted)."""

    def video_named() -> dict[str, object] | None:
        try:
            runs = json.loads((folder / "metadata.json").read_text())["runs"]
        except (OSError, ValueError, KeyError):
            return None
        entry = runs[-1].get("video") if runs else None
        return entry if isinstance(entry, dict) else None

    command = [viewfinder(), "record", "--display", display.name, "--out", str(folder),
               "--video", "--quiet", "--input", "programmatic"]  # fmt: skip
    video, killed_at = kill_once_started(
        command, mark, video_named, "metadata.json to name the video", delay
    )
    assert video["finished"] is False
    started = datetime.fromisoformat(str(video["started_at"])).timestamp()
    return folder / str(video["file"]), killed_at - started


def kill_exec(folder: Path, script: Path, delay: float, mark: str) -> tuple[Path, float]:
    """`viewfinder exec` killed ``delay`` s after its video appeared: (file, lasted)."""

    def video_made() -> tuple[Path, float] | None:
        # ffmpeg makes the file as it encodes its first frame: the video's start
        found = list(folder.glob("video-*.mp4"))
        return (found[0], time.time()) if len(found) == 1 else None

    command = [viewfinder(), "exec", str(script), "--out", str(folder), "--size", "320x240"]
    (video, started), killed_at = kill_once_started(
        command, mark, video_made, "the video to start", delay
    )
    return video, killed_at - started


def test_videos_killed_at_random_moments_play_up_to_the_kill(
    tmp_path: Path, display: Display, mark: str
) -> None:
    chance = random.Random(31)
    record_delays = [chance.uniform(1.2, 4.0) for _ in range(KILLS_EACH)]
    exec_delays = [chance.uniform(1.2, 4.0) for _ in range(KILLS_EACH)]
    script = tmp_path / "records.py"
    script.write_text(RECORDING_SCRIPT)
    with ThreadPoolExecutor(AT_ONCE) as pool:
        recorded = list(
            pool.map(
                lambda n: kill_record(tmp_path / f"rec-{n}", display, record_delays[n], mark),
                range(KILLS_EACH),
            )
        )
        executed = list(
            pool.map(
                lambda n: kill_exec(tmp_path / f"exec-{n}", script, exec_delays[n], mark),
                range(KILLS_EACH),
            )
        )

    # ffmpeg outlives its parent only to finish the file; nothing is left after
    wait_until(
        lambda: (
            not processes_marked(
                MARK, mark, ("ffmpeg", "Xvfb", "python", "python3", Path(sys.executable).name)
            )
        ),
        "every process of the killed runs to end",
        timeout=30,
    )
    for path, lasted in [*recorded, *executed]:
        duration = duration_of(path)
        assert abs(duration - lasted) <= 1.0, (path, duration, lasted)

    # the viewer shows each video, and serves its bytes
    with ViewerServer(ViewerSettings(root=tmp_path, port=0)) as viewer:
        listed = httpx.get(f"{viewer.url}/api/info", timeout=30).json()["top"]["items"]
        ids = {item["id"]: item["kind"] for item in listed}
        for path, _ in [*recorded, *executed]:
            folder = path.parent.parent if path.parent.name == "videos" else path.parent
            name = folder.name
            assert ids.get(name) in ("recording", "exec-run"), (name, ids)
            view = httpx.get(f"{viewer.url}/api/artifact", params={"id": name}, timeout=30).json()
            (video,) = view["videos"]
            assert "cut off" in video["label"]
            assert any("was not stopped" in problem["message"] for problem in view["problems"])
            served = httpx.get(f"{viewer.url}{video['url']}", timeout=30)
            assert served.status_code == 200 and served.content == path.read_bytes()
