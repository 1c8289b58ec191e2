"""Across packages: a recording made on a real screen becomes a cache file that replays.

The recorder records a person's actions on a Tk form on a real Xvfb (real X input
through xdotool, seen by the X RECORD listener); the cache builds a file from the
session folder, hashing the region around each click in its pre-action frame; the form
is started afresh and the cache replays the file through the xvfb backend, checking the
screen before each step. The replay must do what the person did.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from viewfinder.cache import CacheExecutor, ExecutionSettings, ReplayStatus, build_cache
from viewfinder.core import Screenshot
from viewfinder.core.testing import wait_until
from viewfinder.recorder import PairingSettings, Recorder, X11RecordInput
from viewfinder.xvfb import Display, XvfbBackend

FORM = Path(__file__).parents[1] / "packages" / "recorder" / "tests" / "form_app.py"
BLUE, RED, GREY = (0, 0, 255), (255, 0, 0), (128, 128, 128)


@contextmanager
def form(display: Display) -> Iterator[dict[str, Any]]:
    """The recorder tests' Tk form; yields its widget layout."""
    process = subprocess.Popen(
        [sys.executable, str(FORM)], env=display.env(), stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield json.loads(process.stdout.readline())
    finally:
        process.kill()
        process.wait(10)


def centre(rect: list[int]) -> tuple[int, int]:
    x, y, w, h = rect
    return (x + w // 2, y + h // 2)


def patch(shot: Screenshot, layout: dict[str, Any], name: str) -> tuple[int, int, int]:
    return shot.pixel(*centre(layout["patches"][name]))


def test_a_recorded_session_builds_a_cache_that_replays_on_a_fresh_form(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    with Display(800, 600) as display:
        backend = XvfbBackend(display)

        def xdotool(*args: str) -> None:
            subprocess.run(["xdotool", *args], env=display.env(), check=True, timeout=20)

        with form(display) as layout:
            recorder = Recorder(
                folder,
                backend,
                input_source=X11RecordInput(display.name),
                interval=0.1,
                settings=PairingSettings(typing_pause=30.0),
            )
            with recorder:
                entry, go = centre(layout["entry"]), centre(layout["go"])
                xdotool("mousemove", str(entry[0]), str(entry[1]), "click", "1")
                wait_until(lambda: recorder.events == 1, "the click on the entry")
                xdotool("type", "hello")
                xdotool("key", "Return")
                wait_until(lambda: recorder.events == 3, "the typing and Enter")
                xdotool("mousemove", str(go[0]), str(go[1]), "click", "1")
                wait_until(lambda: recorder.events == 4, "the click on Go")

        cache = build_cache(folder)
        blocks = cache.trajectory
        assert [block.input["action"] for block in blocks] == [
            "left_click",
            "type",
            "key",
            "left_click",
        ]
        assert (blocks[1].input["text"], blocks[2].input["text"]) == ("hello", "Return")
        assert blocks[0].visual_representation and blocks[3].visual_representation

        with form(display) as layout:
            wait_until(lambda: patch(backend.capture(), layout, "go") == GREY, "the fresh form")
            settings = ExecutionSettings(delay_time_between_actions=0.5)
            result = CacheExecutor(backend, settings).run(cache)
            assert result.status is ReplayStatus.COMPLETED, result.message
            wait_until(
                lambda: (
                    patch(backend.capture(), layout, "enter") == RED
                    and patch(backend.capture(), layout, "go") == BLUE
                ),
                "the replayed Enter and click to show",
            )
        backend.close()
