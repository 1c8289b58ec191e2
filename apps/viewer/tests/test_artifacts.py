"""Every kind of artifact the viewer shows, read through the real server on loopback.

Each is made by the part that makes it in real use: a recorder session, its Trajectory
export and a cache file built from it, ``viewfinder exec --out`` (a real code env, a
real video), a browser dump's file names, and a desktop run's folder.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from PIL import Image
from typer.testing import CliRunner

from viewfinder.browser.dump import dump_file_name, safe_session_name
from viewfinder.cache import (
    HealRecord,
    RecordingSettings,
    build_cache,
    read_cache_file,
    save_cache_file,
)
from viewfinder.cli.app import build_app
from viewfinder.core import Region
from viewfinder.core.testing import Canvas
from viewfinder.recorder import Recorder, SessionMetadata, load_session
from viewfinder.viewer import ViewerServer
from viewfinder.xvfb import Display


@pytest.fixture
def artifacts(tmp_path: Path, canvas_backend: Canvas) -> Path:
    """A folder holding one of each kind (the exec run is added by its own test)."""
    with Recorder(tmp_path / "session", "canvas", interval=0.05) as recorder:
        recorder.click(10, 20)
        canvas_backend.fill(Region(x=0, y=0, width=320, height=240), "blue")
        time.sleep(0.3)  # the canvas is polled: let the live frame catch up
        recorder.type("hello")
        recorder.key("ctrl+s")
        recorder.scroll(300, 200, dy=-2)
    (tmp_path / "exports").mkdir()
    trajectory = load_session(tmp_path / "session")
    (tmp_path / "exports" / "trajectory.json").write_text(trajectory.model_dump_json())
    save_cache_file(
        build_cache(tmp_path / "session", RecordingSettings(debug_thumbnails=True)),
        tmp_path / "exports" / "cache.json",
    )
    shots = tmp_path / "shots"
    shots.mkdir()
    for call, started in enumerate((datetime(2026, 1, 5, 10, 0, tzinfo=UTC),
                                    datetime(2026, 1, 5, 10, 1, tzinfo=UTC))):  # fmt: skip
        for seq in (1, 2):
            name = dump_file_name("agent 1", started, seq, "png")
            Image.new("RGB", (40, 30), (call * 200, seq * 100, 0)).save(shots / name)
    desktop = tmp_path / "desktop-run"
    with Recorder(desktop, "canvas") as recorder:
        recorder.click(5, 5)
    meta = SessionMetadata.load(desktop / "metadata.json")
    meta.input_source = "computer-tool"  # what a ComputerTool with record_to= writes
    meta.save(desktop / "metadata.json")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not an artifact")
    return tmp_path


def get(viewer: ViewerServer, path: str, **params: object) -> httpx.Response:
    return httpx.get(f"{viewer.url}{path}", params=params or None, timeout=30)


def test_a_folder_of_artifacts_is_a_list_of_each_kind(
    artifacts: Path, serve: Callable[..., ViewerServer]
) -> None:
    viewer = serve(root=artifacts)
    top = get(viewer, "/api/info").json()["top"]
    assert top["kind"] == "list"
    assert {item["id"]: item["kind"] for item in top["items"]} == {
        "desktop-run": "recording",  # which kind of session it is shows once it is read
        "exports/cache.json": "cache",
        "exports/trajectory.json": "trajectory",
        "session": "recording",
        "shots": "browser-shots",
    }
    assert get(viewer, "/api/artifact", id="desktop-run").json()["kind"] == "desktop-run"
    assert (
        get(viewer, "/api/artifact", id="notes")
        .json()["problems"][0]["message"]
        .endswith("or a folder holding some of them")
    )


def test_a_session_and_its_trajectory_export_show_the_same_steps_and_frames(
    artifacts: Path, serve: Callable[..., ViewerServer]
) -> None:
    viewer = serve(root=artifacts)
    session = get(viewer, "/api/artifact", id="session").json()
    exported = get(viewer, "/api/artifact", id="exports/trajectory.json").json()
    labels = ["click (10, 20)", "type 'hello'", "key ctrl+s", "scroll (300, 200) up 2"]
    assert [step["label"] for step in session["steps"]] == labels
    assert [step["label"] for step in exported["steps"]] == labels
    assert session["steps"][0]["t"] is not None and session["steps"][0]["duration_s"] is not None
    for view, artifact_id in ((session, "session"), (exported, "exports/trajectory.json")):
        first = get(viewer, view["steps"][0]["frame"])
        after = get(viewer, view["steps"][0]["after"])
        assert first.headers["content-type"] == "image/png"
        assert Image.open(io.BytesIO(first.content)).getpixel((100, 100)) == (255, 255, 255)
        assert Image.open(io.BytesIO(after.content)).getpixel((100, 100)) == (0, 0, 255)
        thumb = get(viewer, "/api/frame", id=artifact_id, step=1, size="thumb")
        assert thumb.headers["content-type"] == "image/jpeg"
        assert max(Image.open(io.BytesIO(thumb.content)).size) <= 240
    assert get(viewer, "/api/frame", id="session", step=99).status_code == 404


def test_a_cache_file_checked_on_a_given_screenshot(
    artifacts: Path, serve: Callable[..., ViewerServer], tmp_path: Path
) -> None:
    viewer = serve(root=artifacts)
    unchecked = get(viewer, "/api/artifact", id="exports/cache.json").json()
    assert unchecked["steps"][0]["check"]["state"] == "unchecked"
    assert unchecked["steps"][0]["check"]["recorded"] is not None  # a debug thumbnail
    assert unchecked["steps"][2]["check"]["state"] == "not hashed"  # a key is not hashed
    assert unchecked["steps"][0]["check"]["healed"] == []

    cache = read_cache_file(artifacts / "exports" / "cache.json")
    cache.metadata.heals.append(
        HealRecord.model_validate(
            {"timestamp": "2026-11-27T02:10:00Z", "step_index": 0,
             "method": "element", "from": [10, 20], "to": [130, 20],
             "shift": [120, 0], "element": "push button 'Save'"}
        )
    )  # fmt: skip
    save_cache_file(cache, artifacts / "exports" / "cache.json")
    healed = get(viewer, "/api/artifact", id="exports/cache.json").json()
    (entry,) = healed["steps"][0]["check"]["healed"]
    assert entry.endswith(
        "step 0 by element push button 'Save': (10, 20) -> (130, 20), shift (+120, +0)"
    )
    assert healed["steps"][1]["check"]["healed"] == []
    assert healed["facts"]["healed"].startswith("1 step(s) in replays")

    screen = tmp_path / "screen.png"
    Image.new("RGB", (640, 480), "white").save(screen)  # as it was before the first click
    viewer = serve(root=artifacts, screen=str(screen))
    view = get(viewer, "/api/artifact", id="exports/cache.json").json()
    first, typing = view["steps"][0]["check"], view["steps"][1]["check"]
    assert first["state"] == "passed" and first["distance"] <= first["threshold"]
    assert typing["state"] in ("passed", "later")
    assert view["facts"]["checked on"] == str(screen)
    live = get(viewer, first["live"])
    region = first["region"]  # 100 px around (10, 20), clipped at the screen edges
    assert region == [0, 0, 60, 70]
    assert Image.open(io.BytesIO(live.content)).size == (60, 70)
    assert get(viewer, view["steps"][0]["frame"]).status_code == 200


def test_browser_shots_are_grouped_by_call(
    artifacts: Path, serve: Callable[..., ViewerServer]
) -> None:
    viewer = serve(root=artifacts / "shots")
    view = get(viewer, "/api/artifact").json()
    assert view["kind"] == "browser-shots" and view["facts"]["calls"] == "2"
    name = safe_session_name("agent 1")
    labels = [f"{name}: screenshot 1", f"{name}: screenshot 2"]
    assert [step["label"] for step in view["steps"]] == labels * 2
    assert len({step["group"] for step in view["steps"]}) == 2
    assert [step["t"] for step in view["steps"]] == [0.0, 0.0, 60.0, 60.0]
    second = get(viewer, view["steps"][2]["frame"])
    assert Image.open(io.BytesIO(second.content)).getpixel((1, 1)) == (200, 100, 0)


def test_an_exec_run_shows_its_captures_output_and_video(
    tmp_path: Path, serve: Callable[..., ViewerServer]
) -> None:
    script = tmp_path / "film.py"
    script.write_text(
        "import tkinter as tk, time\n"
        "root = tk.Tk(); root.geometry('200x120+0+0'); root.configure(bg='#ff0000')\n"
        "root.update(); capture_screenshot(window=root)\n"
        "start_recording(window=root, fps=10); time.sleep(0.6); stop_recording()\n"
        "print('filmed')\n"
    )
    out = tmp_path / "run"
    result = CliRunner().invoke(
        build_app(), ["exec", str(script), "--out", str(out), "--size", "320x240"]
    )
    assert result.exit_code == 0, result.output
    viewer = serve(root=out)
    view = get(viewer, "/api/artifact").json()
    assert view["kind"] == "exec-run" and view["facts"]["exit code"] == "0"
    assert view["texts"]["stdout"] == "filmed\n"
    assert [step["label"] for step in view["steps"]] == ["capture capture-001.png"]
    (video,) = view["videos"]
    assert video["label"] == "video-001.mp4" and (video["width"], video["height"]) == (200, 120)
    summary = json.loads((out / "run.json").read_text())
    assert video["started_at"].replace("Z", "+00:00") == summary["videos"][0]["started_at"].replace(
        "Z", "+00:00"
    )
    whole = get(viewer, video["url"])
    assert whole.headers["content-type"] == "video/mp4"
    assert whole.content == (out / "video-001.mp4").read_bytes()
    part = httpx.get(f"{viewer.url}{video['url']}", headers={"Range": "bytes=0-99"})
    assert part.status_code == 206 and len(part.content) == 100  # the page can seek


def test_a_desktop_run_reads_as_a_recording_with_a_live_link_to_its_display(
    tmp_path: Path, display: Display, serve: Callable[..., ViewerServer]
) -> None:
    from viewfinder.desktop.computer import ComputerTool

    with ComputerTool(display, record_to=tmp_path / "run") as computer:
        computer({"action": "left_click", "coordinate": [100, 100]})
        computer({"action": "type", "text": "hi"})
        computer({"action": "left_click_drag", "start_coordinate": [10, 10],
                  "coordinate": [200, 150]})  # fmt: skip
    viewer = serve(root=tmp_path)
    view = get(viewer, "/api/artifact", id="run").json()
    assert view["kind"] == "desktop-run" and view["problems"] == []
    assert [step["label"] for step in view["steps"]] == [
        "click (100, 100)", "type 'hi'", "drag (10, 10) → (200, 150)",
    ]  # fmt: skip
    assert view["live"] == display.name  # the display still runs: the page links its live view
    # a link, not a permission: only --live lets the live view stream it
    assert get(viewer, "/api/info").json()["live"] == []
    frame = get(viewer, view["steps"][0]["frame"])
    assert Image.open(io.BytesIO(frame.content)).size == (800, 600)


def test_a_long_artifact_is_given_a_page_of_steps_at_a_time(
    artifacts: Path, serve: Callable[..., ViewerServer]
) -> None:
    viewer = serve(root=artifacts)
    whole = get(viewer, "/api/artifact", id="session").json()
    assert whole["step_count"] == len(whole["steps"]) == 4 and whole["steps_offset"] == 0
    page = get(viewer, "/api/artifact", id="session", offset=1, limit=2).json()
    assert [step["index"] for step in page["steps"]] == [1, 2]
    assert page["step_count"] == 4 and page["steps_offset"] == 1
    assert page["steps"] == whole["steps"][1:3]
    assert get(viewer, "/api/artifact", id="session", offset=4, limit=2).json()["steps"] == []
    for bad in ({"limit": 0}, {"limit": 1001}, {"offset": -1, "limit": 5}):
        assert get(viewer, "/api/artifact", id="session", **bad).status_code == 422
    assert get(viewer, "/api/info").status_code == 200  # and it keeps serving
