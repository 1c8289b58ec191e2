"""``viewfinder cache build|show|check|replay`` in-process, on the canvas backend."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner, Result

from viewfinder.cache import read_cache_file
from viewfinder.cli.app import build_app
from viewfinder.core import EventKind, Region, hookimpl
from viewfinder.core.testing import Canvas, CanvasBackend

runner = CliRunner()
MOVED = Region(x=400, y=300, width=120, height=40)


def invoke(*args: str) -> Result:
    return runner.invoke(build_app(), list(args))


@pytest.fixture
def source(
    tmp_path: Path,
    form: Callable[..., Image.Image],
    history: Callable[..., list[dict[str, Any]]],
    layout: dict[str, Region],
) -> Path:
    frame, typed = form(), form(text="Ada")
    entry, submit = layout["entry"].center, layout["submit"].center
    messages = history(
        frame,
        [
            ({"action": "left_click", "coordinate": [entry.x, entry.y]}, frame),
            ({"action": "left_click", "coordinate": [submit.x, submit.y]}, frame),
            ({"action": "type", "text": "Ada"}, typed),
        ],
    )
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages))
    return path


@pytest.fixture
def built(tmp_path: Path, source: Path) -> Path:
    out = tmp_path / "form.json"
    result = invoke(
        "cache", "build", str(source), "-o", str(out), "-p", "name=Ada", "--debug-thumbnails"
    )
    assert result.exit_code == 0, result.output
    return out


def test_build_writes_the_file_and_says_what_it_hashed(tmp_path: Path, source: Path) -> None:
    out = tmp_path / "c.json"
    result = invoke(
        "cache",
        "build",
        str(source),
        "-o",
        str(out),
        "--method",
        "ahash",
        "--region-size",
        "64",
        "--json",
    )
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert (info["steps"], info["hashed"], info["bytes"]) == (3, 3, out.stat().st_size)
    cache = read_cache_file(out)
    assert (cache.visual.method, cache.visual.region_size) == ("ahash", 64)
    text = invoke("cache", "build", str(source), "-o", str(out)).output
    assert "3 steps, 3 hashed (phash, 100 px, hash size 8)" in text


def test_build_rejects_bad_settings(tmp_path: Path, source: Path) -> None:
    out = tmp_path / "c.json"
    bad_method = invoke("cache", "build", str(source), "-o", str(out), "--method", "xhash")
    assert bad_method.exit_code == 1 and "unknown hash method 'xhash'" in bad_method.output
    bad_size = invoke("cache", "build", str(source), "-o", str(out), "--region-size", "-10")
    assert bad_size.exit_code == 1 and "positive" in bad_size.output
    assert not out.exists()


def test_show_lists_steps_hashes_and_validity(built: Path) -> None:
    result = invoke("cache", "show", str(built))
    assert result.exit_code == 0, result.output
    assert "valid; 0 replays, 0 failures" in result.output
    assert "visual validation: phash, 100 px regions, hash size 8, threshold 10" in result.output
    assert "parameter {{name}}" in result.output
    cache = read_cache_file(built)
    for block in cache.trajectory:
        assert f"{block.visual_representation}" in result.output
    assert "left_click (170, 55)" in result.output and "type '{{name}}'" in result.output
    data = json.loads(invoke("cache", "show", str(built), "--json").output)
    assert data["valid"] is True and len(data["steps"]) == 3 and data["read_version"] == "0.3"


def test_show_a_bad_file_is_one_line_naming_step_and_field(tmp_path: Path, built: Path) -> None:
    data = json.loads(built.read_text())
    data["trajectory"][2]["visual_representation"] = "abc"
    built.write_text(json.dumps(data))
    result = invoke("cache", "show", str(built))
    assert result.exit_code == 1
    assert f"{built}: step 2: trajectory[2].visual_representation" in result.output


@pytest.mark.parametrize("command", ["show", "check", "replay", "reset"])
def test_a_json_object_that_is_not_a_cache_is_refused_by_every_command(
    tmp_path: Path, command: str
) -> None:
    other = tmp_path / "package.json"
    other.write_text('{"name": "app", "version": "1.0"}')
    result = invoke("cache", command, str(other))
    assert result.exit_code == 1, result.output
    assert f"{other}: trajectory: missing" in result.output
    assert other.read_text() == '{"name": "app", "version": "1.0"}'  # left as it was


@pytest.mark.parametrize("bad", ["/proc/viewfinder-nope/c.json", "/dev/null/c.json"])
def test_build_to_a_path_that_cannot_be_written_is_one_line(source: Path, bad: str) -> None:
    result = invoke("cache", "build", str(source), "-o", bad)
    assert result.exit_code in (1, 2), result.output
    assert ("Traceback" not in result.output and result.exception is None) or isinstance(
        result.exception, SystemExit
    )
    assert result.output.startswith("error: ") and bad.split("/")[1] in result.output


def test_check_prints_distances_without_acting(
    canvas_backend: Canvas, built: Path, form: Callable[..., Image.Image]
) -> None:
    canvas_backend.image = form()
    result = invoke("cache", "check", str(built), "--backend", "canvas")
    assert result.exit_code == 0, result.output
    assert result.output.count(" ok ") == 3 and not canvas_backend.events
    canvas_backend.image = form(submit=MOVED)
    # step 0 still matches, so a replay would start: step 1 is judged after step 0 acted
    later = invoke("cache", "check", str(built), "--backend", "canvas", "--json")
    assert later.exit_code == 0, later.output
    rows = json.loads(later.output)
    assert [row["passed"] for row in rows][:2] == [True, False]
    assert [row["decides"] for row in rows] == [True, False, False]
    assert rows[1]["distance"] > rows[1]["threshold"] == 10
    moved = invoke("cache", "check", str(built), "--backend", "canvas", "--start", "1")
    assert moved.exit_code == 3 and "MISMATCH" in moved.output
    assert not canvas_backend.events


def test_check_needs_a_screen(built: Path) -> None:
    result = invoke("cache", "check", str(built))
    assert result.exit_code == 1 and "--display :N" in result.output


def test_replay_completes_and_records_the_attempt(
    canvas_backend: Canvas, built: Path, form: Callable[..., Image.Image]
) -> None:
    canvas_backend.image = form()
    result = invoke(
        "cache", "replay", str(built), "--backend", "canvas", "--delay", "0", "-p", "name=Grace"
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("COMPLETED: replayed 3 step(s)")
    assert canvas_backend.events[-1].kind is EventKind.TYPE
    assert canvas_backend.events[-1].text == "Grace"
    assert read_cache_file(built).metadata.execution_attempts == 1


def test_replay_stops_for_an_agent_with_a_report(
    tmp_path: Path, canvas_backend: Canvas, built: Path, form: Callable[..., Image.Image]
) -> None:
    canvas_backend.image = form(submit=MOVED)
    report = tmp_path / "why"
    result = invoke(
        "cache",
        "replay",
        str(built),
        "--backend",
        "canvas",
        "--delay",
        "0",
        "-p",
        "name=Grace",
        "--report-dir",
        str(report),
        "--json",
    )
    assert result.exit_code == 3, result.output
    data = json.loads(result.output)
    assert data["status"] == "NEEDS_AGENT" and data["step_index"] == 1
    assert Path(data["report"]) == report / "step-1.html" and (report / "step-1.png").exists()
    assert len(canvas_backend.events) == 1
    lenient = invoke(
        "cache",
        "replay",
        str(built),
        "--backend",
        "canvas",
        "--delay",
        "0",
        "-p",
        "name=Grace",
        "--threshold",
        "64",
        "--no-save",
    )
    # 64 bits: any hash matches, but the colour check still sees the button has gone
    assert lenient.exit_code == 3, lenient.output
    assert "colours differ" in lenient.output and "within threshold 64" in lenient.output
    skipped = invoke(
        "cache",
        "replay",
        str(built),
        "--backend",
        "canvas",
        "--delay",
        "0",
        "-p",
        "name=Grace",
        "--skip-visual-validation",
    )
    assert skipped.exit_code == 0, skipped.output


def test_replay_without_a_parameter_value_is_an_error(canvas_backend: Canvas, built: Path) -> None:
    result = invoke("cache", "replay", str(built), "--backend", "canvas")
    assert result.exit_code == 1 and "name" in result.output and "-p NAME=VALUE" in result.output
    assert not canvas_backend.events
    malformed = invoke("cache", "replay", str(built), "--backend", "canvas", "-p", "name")
    assert malformed.exit_code == 2 and "NAME=VALUE" in malformed.output


def test_backend_options_reach_the_backend(
    viewfinder_plugin: Callable[..., str], built: Path, form: Callable[..., Image.Image]
) -> None:
    seen: list[dict[str, object]] = []
    canvas = Canvas()
    canvas.image = form()

    class Recorded:
        @hookimpl
        def viewfinder_register_capture_backends(self, register: Callable[..., None]) -> None:
            def factory(**options: object) -> CanvasBackend:
                seen.append(options)
                return CanvasBackend(canvas)

            register("optioned", factory)

    viewfinder_plugin(Recorded(), name="optioned")
    result = invoke(
        "cache",
        "check",
        str(built),
        "-b",
        "optioned",
        "-O",
        "zoom=2",
        "-O",
        "full-page=true",
        "-O",
        "url=http://x",
    )
    assert result.exit_code == 0, result.output
    assert seen == [{"zoom": 2, "full_page": True, "url": "http://x"}]
