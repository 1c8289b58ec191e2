"""``record_start`` / ``record_stop`` as registered tools: a real recording of a real display."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from viewfinder.core import EventKind, ToolContext, call_tool, tool_registry
from viewfinder.recorder import load_session
from viewfinder.xvfb import Display


def test_both_tools_are_registered() -> None:
    tools = tool_registry()
    assert tools["record_start"].plugin == tools["record_stop"].plugin == "recorder"
    assert tools["record_stop"].input_schema()["properties"] == {}


def test_a_recording_started_and_stopped_by_tools_holds_the_clicks_made_meanwhile(
    tmp_path: Path,
    display: Display,
    form: Any,
    wait_until: Callable[..., Any],
) -> None:
    context = ToolContext(display=display.name, workdir=tmp_path)
    started = call_tool("record_start", {"folder": "run"}, context)
    assert not started.is_error, started.text
    again = call_tool("record_start", {"folder": "other"}, context)
    assert again.is_error and "already recording" in again.text

    entry = form.centre("entry")
    display.input.click(*entry)
    manifest = tmp_path / "run" / "manifest.jsonl"
    wait_until(lambda: manifest.exists() and manifest.read_text().strip(), "a manifest line")

    stopped = call_tool("record_stop", {}, context)
    assert not stopped.is_error, stopped.text
    assert stopped.structured is not None and stopped.structured["events"] == 1
    line = json.loads(manifest.read_text().splitlines()[0])
    assert line["kind"] == "click"
    assert (line["position"]["x"], line["position"]["y"]) == tuple(entry)
    trajectory = load_session(tmp_path / "run")
    assert [step.event.kind for step in trajectory.steps] == [EventKind.CLICK]

    nothing = call_tool("record_stop", {}, context)
    assert nothing.is_error and "nothing is being recorded" in nothing.text


def test_bad_folders_and_no_display_are_error_results(tmp_path: Path, display: Display) -> None:
    context = ToolContext(display=display.name, workdir=tmp_path)
    outside = call_tool("record_start", {"folder": "../elsewhere"}, context)
    assert outside.is_error and "outside this session's folder" in outside.text
    no_display = call_tool("record_start", {"folder": "x"}, ToolContext(workdir=tmp_path))
    assert no_display.is_error and "no display" in no_display.text


def test_closing_the_session_stops_its_recording(tmp_path: Path, display: Display) -> None:
    with ToolContext(display=display.name, workdir=tmp_path) as context:
        assert not call_tool("record_start", {"folder": "run"}, context).is_error
        recording = context.get_resource("recorder.recording")
        assert recording is not None
        recorder = recording.recorder
        assert recorder.running
    assert not recorder.running
    assert (tmp_path / "run" / "metadata.json").exists()
