"""The folders the viewer shows are the folders on disk: every kind of artifact is read
again when its files change (a new capture, a longer stdout, a new shot, a new manifest
line, a rewritten JSON), and a rerun into a viewed folder shows the new run, through
the real server on loopback."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from PIL import Image
from typer.testing import CliRunner

from viewfinder.browser.dump import dump_file_name
from viewfinder.cli.app import build_app
from viewfinder.recorder import Recorder, load_session
from viewfinder.viewer import ViewerServer

RED, GREEN, BLUE = (255, 0, 0), (0, 255, 0), (0, 0, 255)


def artifact(viewer: ViewerServer, name: str) -> dict[str, Any]:
    response = httpx.get(f"{viewer.url}/api/artifact", params={"id": name}, timeout=30)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def pixel_of(viewer: ViewerServer, url: str) -> tuple[int, ...]:
    response = httpx.get(f"{viewer.url}{url}", timeout=30)
    assert response.status_code == 200, response.text
    seen = Image.open(io.BytesIO(response.content)).convert("RGB").getpixel((5, 5))
    assert isinstance(seen, tuple)
    return seen


def capture(folder: Path, number: int, colour: tuple[int, int, int]) -> None:
    Image.new("RGB", (40, 30), colour).save(folder / f"capture-{number:03d}.png")


def test_an_exec_folder_shows_new_captures_and_output_and_a_rewritten_frame(
    tmp_path: Path, serve: Callable[..., ViewerServer]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "stdout.txt").write_text("first line\n")
    (run / "stderr.txt").write_text("")
    capture(run, 1, RED)
    capture(run, 2, GREEN)
    viewer = serve(root=tmp_path)
    before = artifact(viewer, "run")
    assert len(before["steps"]) == 2 and before["texts"]["stdout"] == "first line\n"
    assert pixel_of(viewer, before["steps"][0]["frame"]) == RED

    capture(run, 3, BLUE)
    with (run / "stdout.txt").open("a") as stdout:
        stdout.write("second line\n")
    after = artifact(viewer, "run")
    assert [step["label"] for step in after["steps"]] == [
        "capture capture-001.png", "capture capture-002.png", "capture capture-003.png"
    ]  # fmt: skip
    assert after["texts"]["stdout"] == "first line\nsecond line\n"
    assert pixel_of(viewer, after["steps"][2]["frame"]) == BLUE

    # a rerun: everything deleted, then written again with other pictures
    for old in run.iterdir():
        old.unlink()
    (run / "stdout.txt").write_text("rerun\n")
    (run / "stderr.txt").write_text("")
    capture(run, 1, GREEN)
    rerun = artifact(viewer, "run")
    assert len(rerun["steps"]) == 1 and rerun["texts"]["stdout"] == "rerun\n"
    # the frame under the same file name has a new address, so no browser keeps the old
    assert rerun["steps"][0]["frame"] != before["steps"][0]["frame"]
    assert pixel_of(viewer, rerun["steps"][0]["frame"]) == GREEN
    assert pixel_of(viewer, rerun["steps"][0]["thumb"])[1] > 200


def test_a_shots_folder_shows_a_new_shot(
    tmp_path: Path, serve: Callable[..., ViewerServer]
) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    call = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    Image.new("RGB", (40, 30), RED).save(shots / dump_file_name("agent", call, 1, "png"))
    viewer = serve(root=tmp_path)
    assert len(artifact(viewer, "shots")["steps"]) == 1
    Image.new("RGB", (40, 30), BLUE).save(shots / dump_file_name("agent", call, 2, "png"))
    steps = artifact(viewer, "shots")["steps"]
    assert len(steps) == 2
    assert pixel_of(viewer, steps[1]["frame"]) == BLUE


def test_a_session_and_a_trajectory_show_what_was_added(
    tmp_path: Path, serve: Callable[..., ViewerServer], canvas_backend: Any
) -> None:
    with Recorder(tmp_path / "session", "canvas") as recorder:
        recorder.click(10, 20)
    exported = tmp_path / "trajectory.json"
    exported.write_text(load_session(tmp_path / "session").model_dump_json())
    viewer = serve(root=tmp_path)
    assert len(artifact(viewer, "session")["steps"]) == 1
    assert len(artifact(viewer, "trajectory.json")["steps"]) == 1

    with Recorder(tmp_path / "session", "canvas", resume=True) as recorder:
        recorder.click(30, 40)
    assert [step["label"] for step in artifact(viewer, "session")["steps"]] == [
        "click (10, 20)", "click (30, 40)"
    ]  # fmt: skip
    exported.write_text(load_session(tmp_path / "session").model_dump_json())
    assert len(artifact(viewer, "trajectory.json")["steps"]) == 2


SCRIPT = """\
import sys
print(sys.argv[1])
for _ in range(int(sys.argv[2])):
    capture_screenshot()
"""


def test_a_rerun_of_exec_into_a_viewed_folder_shows_the_new_run(
    tmp_path: Path, serve: Callable[..., ViewerServer]
) -> None:
    script = tmp_path / "shots.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out"

    def run(word: str, captures: int) -> None:
        args = ["exec", str(script), "--out", str(out), "--size", "320x240"]
        result = CliRunner().invoke(build_app(), [*args, "--", word, str(captures)])
        assert result.exit_code == 0, result.output

    run("first", 3)
    viewer = serve(root=tmp_path)
    first = artifact(viewer, "out")
    assert first["texts"]["stdout"] == "first\n" and len(first["steps"]) == 3
    assert json.loads((out / "run.json").read_text())["status"] == "exited"
    run("second", 1)
    second = artifact(viewer, "out")
    assert second["texts"]["stdout"] == "second\n"
    assert len(second["steps"]) == 1
    assert second["steps"][0]["frame"] != first["steps"][0]["frame"]
    assert os.path.exists(out / "capture-001.png") and not (out / "capture-002.png").exists()
