"""Across packages: an agent's run through ComputerTool becomes a cache file that replays.

A scripted agent drives the desktop form (examples/desktop_form.py) on a real 1920x1080
Xvfb seen at 1024x768, recording every step (``record_to``); ``viewfinder cache build``
turns the session folder into a cache file; the cache replays it through the xvfb backend
onto a fresh instance of the form and leaves it as the agent did; on a form whose Apply
button has moved, replay stops before the first click on it and hands over.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from viewfinder.cache import CacheExecutor, ExecutionSettings, ReplayStatus, read_cache_file
from viewfinder.cli.app import build_app
from viewfinder.core.testing import wait_until
from viewfinder.desktop import ComputerTool
from viewfinder.xvfb import Display, XvfbBackend

FORM = Path(__file__).resolve().parents[1] / "examples" / "desktop_form.py"


@contextmanager
def form(display: Display, state: Path, *extra: str) -> Iterator[dict[str, list[int]]]:
    """A fresh form on ``display``; yields its layout."""
    process = subprocess.Popen(
        [sys.executable, str(FORM), "--state", str(state), *extra],
        env=display.env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield json.loads(state.read_text())["layout"]
    finally:
        process.kill()
        process.wait(10)


def read(state: Path) -> dict[str, Any]:
    return json.loads(state.read_text())


def centre(rect: list[int]) -> tuple[int, int]:
    x, y, width, height = rect
    return (x + width // 2, y + height // 2)


def test_a_computer_tool_run_builds_a_cache_that_replays_and_stops_where_the_app_changed(
    tmp_path: Path,
) -> None:
    session, cache_file = tmp_path / "session", tmp_path / "form.cache.json"
    with Display(1920, 1080) as display:
        # -- the agent's run ------------------------------------------------------------
        first = tmp_path / "first.json"
        with (
            form(display, first) as layout,
            ComputerTool(display, target="XGA", record_to=session) as tool,
        ):

            def model(rect: list[int], dx: int = 0) -> list[int]:
                x, y = centre(rect)
                return list(tool.scaling.to_model(x + dx, y))

            slider = layout["slider"]
            agent = [
                {"action": "screenshot"},
                {"action": "left_click", "coordinate": model(layout["entry"])},
                {"action": "type", "text": "Ada"},
                {"action": "left_click", "coordinate": model(layout["button"])},
                {
                    "action": "left_click_drag",
                    "start_coordinate": model(slider, -slider[2] // 2 + 15),
                    "coordinate": model(slider),
                },
                {
                    "type": "click",
                    "button": "left",
                    "x": model(layout["button"])[0],
                    "y": model(layout["button"])[1],
                },
                {
                    "action": "scroll",
                    "coordinate": model(layout["list"]),
                    "scroll_direction": "down",
                    "scroll_amount": 2,
                },
            ]
            for action in agent:
                result = tool(action)
                assert not result.is_error, result.error
            done = wait_until(lambda: read(first)["list"]["top"] == 10 and read(first), "the run")
        assert (done["entry"]["text"], done["swatch"]["clicks"]) == ("Ada", 2)
        assert 40 <= done["slider"] <= 60

        # -- viewfinder cache build --------------------------------------------------------
        built = CliRunner().invoke(
            build_app(), ["cache", "build", str(session), "-o", str(cache_file)]
        )
        assert built.exit_code == 0, built.output
        cache = read_cache_file(cache_file)
        assert [block.input["action"] for block in cache.trajectory] == [
            "left_click",
            "type",
            "left_click",
            "left_click_drag",
            "left_click",
            "scroll",
        ]  # the screenshot only looked, so it is not replayed
        apply_x, apply_y = cache.trajectory[2].input["coordinate"]
        assert abs(apply_x - centre(layout["button"])[0]) <= 1  # screen coordinates
        assert abs(apply_y - centre(layout["button"])[1]) <= 1

        backend = XvfbBackend(display)
        settings = ExecutionSettings(delay_time_between_actions=0.2)
        try:
            # -- replay onto a fresh form: it ends as the agent left it --------------------
            second = tmp_path / "second.json"
            with form(display, second):
                result = CacheExecutor(backend, settings).run(cache_file)
                assert result.status is ReplayStatus.COMPLETED, result.message
                replayed = wait_until(
                    lambda: read(second)["list"]["top"] == 10 and read(second), "the replay"
                )
            assert replayed["entry"]["text"] == "Ada"
            assert replayed["swatch"] == done["swatch"]
            assert abs(replayed["slider"] - done["slider"]) <= 2

            # -- the button moved: replay stops before the first click on it ---------------
            third = tmp_path / "third.json"
            with form(display, third, "--shift-button", "60"):
                result = CacheExecutor(backend, settings).run(cache_file)
                assert result.status is ReplayStatus.NEEDS_AGENT, result.message
                assert result.step_index == 2
                assert result.acted == [0, 1]
                wait_until(lambda: read(third)["entry"]["text"] == "Ada", "the steps before it")
                assert read(third)["swatch"]["clicks"] == 0
        finally:
            backend.close()
