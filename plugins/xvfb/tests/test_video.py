"""ScreenVideo: a fragmented MP4 that a kill of ffmpeg leaves playable; ffmpeg's own
error line when it fails (a full disk)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from viewfinder.core.testing import child_processes
from viewfinder.xvfb import Display
from viewfinder.xvfb.video import ScreenVideo, VideoError, said


def probed_duration(path: Path) -> float:
    result = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", str(path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return float(json.loads(result.stdout)["format"]["duration"])


@pytest.mark.parametrize("lasting", [1.2, 2.3])
def test_ffmpeg_killed_leaves_a_playable_file_up_to_its_last_fragment(
    tmp_path: Path, display: Display, lasting: float
) -> None:
    video = ScreenVideo(display.name, tmp_path / "cut.mp4", fps=25).start()
    assert video.pid is not None and video.started_at is not None
    time.sleep(lasting)
    os.kill(video.pid, signal.SIGKILL)
    lasted = time.time() - video.started_at.timestamp()
    video.kill()  # reaps it
    duration = probed_duration(tmp_path / "cut.mp4")
    assert lasted - 1.0 <= duration <= lasted + 0.1, (duration, lasted)
    assert child_processes("ffmpeg") == set()


def test_a_full_disk_is_named_in_the_error(tmp_path: Path, display: Display) -> None:
    target = tmp_path / "full.mp4"
    target.symlink_to("/dev/full")  # every write fails with ENOSPC, as on a full disk
    # ffmpeg may fail on its first write before or after it grabbed its first frame:
    # the error comes from start() or from stop(), and says why either way
    with pytest.raises(VideoError) as raised:
        ScreenVideo(display.name, target).start().stop()
    message = str(raised.value)
    assert "No space left on device" in message
    assert "libx264 @" not in message
    assert child_processes("ffmpeg") == set()


def test_what_ffmpeg_said_keeps_its_errors_and_drops_its_statistics() -> None:
    stderr = "\n".join(
        [
            "Input #0, x11grab, from ':1':",
            "[mp4 @ 0x1] Error writing packet: No space left on device",
            "[mp4 @ 0x1] Error writing packet: No space left on device",
            "[libx264 @ 0x2] frame I:3     Avg QP:10.00  size:  1234",
            "[libx264 @ 0x2] kb/s:12.34",
        ]
    )
    assert said(stderr) == (
        ": ffmpeg said:\n[mp4 @ 0x1] Error writing packet: No space left on device"
    )
    assert said("Stream mapping:\n  Stream #0:0 -> #0:0") == (
        ": ffmpeg said:\nStream mapping:\nStream #0:0 -> #0:0"
    )
    assert said("") == ""


def test_an_ffmpeg_that_exits_before_its_first_frame_is_reported_with_what_it_said(
    tmp_path: Path,
) -> None:
    # no display runs as :7398 (a number no test starts): ffmpeg exits at once
    with pytest.raises(VideoError) as raised:
        ScreenVideo(":7398", tmp_path / "none.mp4").start()
    message = str(raised.value)
    assert message.startswith("ffmpeg exited recording :7398: ffmpeg said:")
    assert "Cannot open display :7398" in message
    assert child_processes("ffmpeg") == set()
