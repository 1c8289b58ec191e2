"""The live frame on a real Xvfb: always a whole PNG, encoded only when the screen changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.core import hookimpl
from viewfinder.recorder import Recorder
from viewfinder.xvfb import Display

HERE = Path(__file__).parent


@pytest.fixture
def flicker(display: Display) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, str(HERE / "flicker_app.py")],
        env=display.env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield process
    finally:
        process.kill()
        process.wait(10)


def test_a_reader_never_sees_a_partial_live_frame(
    tmp_path: Path, display: Display, flicker: Any, wait_until: Callable[..., Any]
) -> None:
    with Recorder(
        tmp_path / "s", "xvfb", backend_options={"display": display.name}, interval=0.001
    ) as recorder:
        reader = subprocess.Popen(
            [sys.executable, str(HERE / "png_reader.py"), str(recorder.layout.current)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert reader.stdout is not None and reader.stdin is not None
        try:
            reads = 0
            while reads < 3000 or recorder.frames.stats.writes < 300:
                line = reader.stdout.readline()
                assert line, "the reader died"
                reads = json.loads(line)["reads"]
                assert recorder.running, recorder.error
        finally:
            reader.stdin.close()
        report = json.loads(reader.stdout.read().strip().splitlines()[-1])
        reader.wait(30)
        writes = recorder.frames.stats.writes
    assert report["failed"] == 0, report["failures"]
    assert report["reads"] >= 3000 and writes >= 300
    # It saw the frame change many times while it read.
    assert report["distinct"] > 20


def test_a_still_screen_costs_no_grab_and_is_encoded_once(
    tmp_path: Path, display: Display, form: Any, wait_until: Callable[..., Any]
) -> None:
    # The display reports its repaints: on a still screen a tick only bumps the mtime.
    with Recorder(
        tmp_path / "s", "xvfb", backend_options={"display": display.name}, interval=0.02
    ) as recorder:
        assert recorder.frames.follows_damage
        current = recorder.layout.current
        first_mtime = os.stat(current).st_mtime_ns
        stats = recorder.frames.stats
        wait_until(lambda: stats.still >= 20, "20 ticks")
        wait_until(lambda: os.stat(current).st_mtime_ns > first_mtime, "a fresher mtime")
        assert stats.writes == 1 and stats.captures < stats.still
        assert stats.unchanged == stats.captures - 1


def test_each_distinct_frame_passes_the_screenshot_hook(
    tmp_path: Path,
    display: Display,
    flicker: Any,
    viewfinder_plugin: Callable[..., str],
    wait_until: Callable[..., Any],
) -> None:
    seen: list[dict[str, Any]] = []

    class Observer:
        @hookimpl
        def viewfinder_screenshot_captured(self, screenshot: Any, context: Any) -> None:
            seen.append({"size": screenshot.size, **context})

    viewfinder_plugin(Observer(), name="recorder-test-observer")
    with Recorder(
        tmp_path / "s", "xvfb", backend_options={"display": display.name}, interval=0.01
    ) as recorder:
        wait_until(lambda: len(seen) >= 5, "five announced frames")
    writes = recorder.frames.stats.writes  # the updater has stopped: final counts
    assert seen[0] == {"size": (800, 600), "backend": "xvfb", "recorder": str(recorder.layout.root)}
    assert len(seen) == writes


def test_an_action_paired_late_still_gets_a_frame_from_before_it(
    tmp_path: Path, display: Display, flicker: Any, wait_until: Callable[..., Any]
) -> None:
    # On a busy machine the listener hands an action over some time after it happened,
    # while a screen that repaints non-stop is captured many times over: the frames from
    # before the action must still be there.
    with Recorder(
        tmp_path / "s", "xvfb", backend_options={"display": display.name}, interval=0.01
    ) as recorder:
        store = recorder.frames
        wait_until(lambda: store.stats.writes >= 3, "three frames")
        at = time.monotonic()
        writes = store.stats.writes
        wait_until(lambda: store.stats.writes >= writes + 12, "a dozen frames after the action")
        frame = store.frame_before(at)
    assert frame.first_seen <= at
