"""``viewfinder record --video``: the screen of each run as an MP4 beside the manifest."""

from __future__ import annotations

import io
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core.testing import child_processes
from viewfinder.recorder import read_session
from viewfinder.xvfb import Display


@pytest.fixture(autouse=True)
def no_ffmpeg_left() -> Iterator[None]:
    yield
    assert child_processes("ffmpeg") == set(), "an ffmpeg outlived its recording"


def frame_at(path: Path, seconds: float) -> Image.Image:
    result = subprocess.run(
        ["ffmpeg", "-v", "error", "-ss", f"{seconds:.3f}", "-i", str(path), "-frames:v", "1",
         "-f", "image2pipe", "-c:v", "png", "-"],
        capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    return Image.open(io.BytesIO(result.stdout)).convert("RGB")


def paint_later(
    display: Display, colours: list[str], every: float
) -> tuple[threading.Thread, list[Any]]:
    """Paint the root window each colour in turn, ``every`` seconds apart; note when."""
    painted: list[Any] = []

    def paint() -> None:
        for colour in colours:
            time.sleep(every)
            subprocess.run(["xsetroot", "-solid", colour], env=display.env(), check=True)
            painted.append((colour, time.time()))

    thread = threading.Thread(target=paint)
    thread.start()
    return thread, painted


def test_record_video_writes_each_runs_screen_beside_the_manifest(
    tmp_path: Path, display: Display
) -> None:
    folder = tmp_path / "session"
    subprocess.run(["xsetroot", "-solid", "#000000"], env=display.env(), check=True)
    painter, painted = paint_later(display, ["#ff0000", "#0000ff"], 0.6)
    args = ["record", "--display", display.name, "--out", str(folder), "--video", "--quiet"]
    result = CliRunner().invoke(build_app(), [*args, "--duration", "2"])
    painter.join()
    assert result.exit_code == 0, result.output
    assert f"video: {folder / 'videos' / '1.mp4'}" in result.output

    run = json.loads((folder / "metadata.json").read_text())["runs"][0]
    video = run["video"]
    assert video["file"] == "videos/1.mp4"
    assert 1.7 <= video["duration_s"] <= 2.4
    started = datetime.fromisoformat(video["started_at"]).timestamp()
    # the video shows each colour where the wall clock says it was painted
    for colour, at in painted:
        wanted = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
        seen = frame_at(folder / "videos" / "1.mp4", at - started + 0.25).getpixel((10, 10))
        assert isinstance(seen, tuple)
        assert all(abs(a - b) <= 48 for a, b in zip(seen, wanted, strict=True)), (colour, seen)

    # a resumed session gets a video of its second run; the first stays as it was
    resumed = CliRunner().invoke(build_app(), [*args, "--resume", "--duration", "0.5"])
    assert resumed.exit_code == 0, resumed.output
    runs = json.loads((folder / "metadata.json").read_text())["runs"]
    assert [entry["video"]["file"] for entry in runs] == ["videos/1.mp4", "videos/2.mp4"]
    assert read_session(folder).metadata.status == "stopped"


def test_record_video_needs_an_x_display(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    result = CliRunner().invoke(
        build_app(), ["record", "--backend", "canvas", "--out", str(tmp_path / "s"), "--video"]
    )
    assert result.exit_code == 2
    assert "a video records an X display" in result.output
    assert not (tmp_path / "s").exists()
