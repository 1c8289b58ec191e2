"""start_recording() / stop_recording(): MP4 videos of the code env's screen, read back by ffprobe.

The videos are made by ffmpeg (x11grab) in the environment's process, never in the
sandbox; every test checks that no ffmpeg is left running.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.codeenv import CodeAction, CodeEnvironment
from viewfinder.core.testing import child_processes

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "codeenv"


@pytest.fixture(autouse=True)
def no_ffmpeg_left() -> Iterator[None]:
    yield
    assert child_processes("ffmpeg") == set(), "an ffmpeg outlived its step"


def ffprobe(path: Path) -> dict[str, Any]:
    result = subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-show_entries",
         "format=duration,format_name:stream=codec_name,width,height,nb_read_frames,pix_fmt",
         "-of", "json", str(path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    data = json.loads(result.stdout)
    return {**data["format"], **data["streams"][0]}


def frame_at(path: Path, seconds: float) -> Image.Image:
    """The video's frame at ``seconds``, decoded by ffmpeg."""
    result = subprocess.run(
        ["ffmpeg", "-v", "error", "-ss", f"{seconds:.3f}", "-i", str(path), "-frames:v", "1",
         "-f", "image2pipe", "-c:v", "png", "-"],
        capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    return Image.open(io.BytesIO(result.stdout)).convert("RGB")


def close_to(colour: tuple[int, ...], hex_colour: str, tolerance: int = 48) -> bool:
    wanted = tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return all(abs(a - b) <= tolerance for a, b in zip(colour, wanted, strict=True))


def square_x(frame: Image.Image) -> int:
    """Where the white square's left edge is on the row through it."""
    row = [frame.getpixel((x, 110)) for x in range(320)]
    white = [x for x, pixel in enumerate(row) if min(pixel) > 200]  # type: ignore[type-var]
    assert white, "no white square on its row"
    return white[0]


def test_exec_records_a_tk_animation_to_an_mp4(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        build_app(),
        ["exec", str(EXAMPLES / "tk_video.py"), "--out", str(out), "--size", "640x480"],
    )
    assert result.exit_code == 0, result.output
    assert "1 video(s)" in result.output
    report = json.loads((out / "stdout.txt").read_text())
    video = out / "video-001.mp4"
    summary = json.loads((out / "run.json").read_text())
    (listed,) = summary["videos"]
    assert listed["path"] == str(video)

    probed = ffprobe(video)
    assert probed["codec_name"] == "h264" and "mp4" in probed["format_name"]
    assert (probed["width"], probed["height"]) == (640, 480)
    assert probed["pix_fmt"] == "yuv420p"
    # the video runs from before start_recording() returns (its first frame) to after
    # stop_recording() is called (the recorder stops when it gets the request): at least
    # the program's time between the two, at most the time from calling the one to the
    # other's return; a frame either way for where frames fall
    duration = float(probed["duration"])
    frame = 1 / 25
    assert report["recorded_s"] - frame <= duration <= report["outer_s"] + frame, (
        duration,
        report["recorded_s"],
        report["outer_s"],
    )
    assert int(probed["nb_read_frames"]) == pytest.approx(duration * 25, abs=2)
    assert listed["duration_s"] == pytest.approx(duration, abs=0.05)

    # the pixels show the animation, each colour where the program's clock says. The
    # MP4 is constant-rate: when a loaded machine stalls ffmpeg's grabs, the frames of the
    # stall repeat the last one grabbed, which may be the phase before (it failed once at
    # +0.1 s, grey); 0.25 s in, a stall that long would show
    started = datetime.fromisoformat(listed["started_at"]).timestamp()
    for phase in report["phases"]:
        early = frame_at(video, phase["at"] - started + 0.25)
        late = frame_at(video, phase["at"] - started + 0.5)
        for frame in (early, late):
            seen = frame.getpixel((300, 20))
            assert isinstance(seen, tuple)
            assert close_to(seen, phase["colour"]), (phase, seen)
        # the example places the square by its clock (200 px a second): 50 px apart, less
        # by what a stall of the grabs repeats
        assert square_x(late) - square_x(early) > 30, "the square did not move"


def test_the_observation_holds_the_video_path_and_base64(env: CodeEnvironment) -> None:
    code = (
        "import tkinter as tk, time\n"
        "root = tk.Tk(); root.geometry('200x100+0+0'); root.configure(bg='#00ff00')\n"
        "root.update()\n"
        "first = start_recording(window=root, fps=10)\n"
        "time.sleep(0.5)\n"
        "info = stop_recording(first)\n"
        "print(info['width'], info['height'], info['fps'], info['path'].endswith('.mp4'))\n"
    )
    observation = env.step(CodeAction(code=code))
    assert observation.exit_code == 0, observation.stderr
    assert observation.stdout == "200 100 10.0 True\n"
    (video,) = observation.videos
    assert video.stopped_by == "code" and video.region == [0, 0, 200, 100]
    assert video.mime_type == "video/mp4"
    assert video.data is not None
    assert base64.b64decode(video.data) == Path(video.path).read_bytes()
    assert video.size_bytes == Path(video.path).stat().st_size
    assert close_to(frame_at(Path(video.path), 0.2).getpixel((100, 50)), "#00ff00")  # type: ignore[arg-type]
    # the code cannot reach the file: it lives in the environment's folder
    probe = env.step(CodeAction(code=f"open({video.path!r}, 'rb')"))
    assert probe.exit_code == 1 and "Error" in probe.stderr


def test_a_recording_left_running_ends_with_the_step_even_a_killed_one(
    make_env: Callable[..., CodeEnvironment],
) -> None:
    env = make_env(timeout_s=20, video_inline_bytes=0)
    left = env.step(
        CodeAction(code="start_recording(region=(0, 0, 64, 48)); import time; time.sleep(0.4)")
    )
    assert left.exit_code == 0, left.stderr
    (video,) = left.videos
    assert video.stopped_by == "step end" and video.data is None  # over the inline limit
    assert (video.width, video.height) == (64, 48)
    assert float(ffprobe(Path(video.path))["duration"]) > 0.2

    killed = env.step(
        CodeAction(code="start_recording(); import time; time.sleep(30)", timeout_s=1.5)
    )
    assert killed.exit_code == 124
    (video,) = killed.videos
    assert video.stopped_by == "worker lost"
    assert float(ffprobe(Path(video.path))["duration"]) > 0.5  # a whole file all the same
    folder = Path(video.path).parent
    env.close()
    assert not folder.exists(), "the environment's video folder outlived it"


def test_recording_mistakes_are_errors_the_code_can_handle(env: CodeEnvironment) -> None:
    code = (
        "problems = []\n"
        "for call in (lambda: stop_recording(), lambda: start_recording(fps=0),\n"
        "             lambda: start_recording(region=(600, 0, 100, 100))):\n"
        "    try:\n"
        "        call()\n"
        "    except (RuntimeError, ValueError) as exc:\n"
        "        problems.append(type(exc).__name__ + ': ' + str(exc))\n"
        "print('\\n'.join(problems))\n"
    )
    observation = env.step(CodeAction(code=code))
    assert observation.exit_code == 0, observation.stderr
    lines = observation.stdout.splitlines()
    assert lines[0] == (
        "RuntimeError: stop_recording(): no recording is running; call start_recording() first"
    )
    assert lines[1].startswith("ValueError: start_recording(fps=...): expected 1 to 60")
    assert lines[2].startswith("RuntimeError: start_recording(): region x=600")
    assert observation.videos == []
    assert "videos" not in json.dumps(observation.model_dump(mode="json")["metadata"])
