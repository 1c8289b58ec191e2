"""A double-click through both vendors' action shapes selects a word in a GTK entry and
in a Tk entry, and a typed letter replaces it.

GTK and Tk count presses however close together they come, but only within their
double-click time (GTK 400 ms, Tk 500 ms): these guard the pause between the clicks
(xvfb/multiclick.py) from growing past it. Each app logs every press with the widget it
went to and how many clicks it counted, its entry's selection and its text.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.core.testing import wait_until
from viewfinder.desktop import ComputerTool
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
APPS = {
    "gtk": ["/usr/bin/python3", str(HERE / "multi_click_gtk_app.py")],  # Debian's python3-gi
    "tk": [sys.executable, str(HERE / "multi_click_tk_app.py")],
}
#: The presses each toolkit reports for a double-click: GTK reports every press as
#: one, then the double-click as an event of its own.
DOUBLE_CLICK_PRESSES = {
    "gtk": ["press entry 1", "press entry 1", "press entry 2"],
    "tk": ["press entry 1", "press entry 2"],
}
ACTIONS = {
    "anthropic": (
        lambda x, y: {"action": "double_click", "coordinate": [x, y]},
        {"action": "type", "text": "Z"},
    ),
    "openai": (
        lambda x, y: {"type": "double_click", "x": x, "y": y},
        {"type": "type", "text": "Z"},
    ),
}


class RunningApp:
    """One of the apps on ``display``, its output lines collected as they come."""

    def __init__(self, display: Display, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, env=display.env(), stdout=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.strip())

    def wait_for(self, line: str) -> None:
        wait_until(lambda: line in self.lines, f"{line!r} from the app (it said {self.lines})")

    def world(self) -> tuple[int, int]:
        """Where the app says the word "world" is."""
        found = wait_until(
            lambda: next((line for line in self.lines if line.startswith("world ")), None),
            "the app drawn",
        )
        _, x, y = found.split()
        return int(x), int(y)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


@pytest.fixture(params=sorted(APPS))
def app(request: pytest.FixtureRequest) -> Iterator[tuple[str, Display, RunningApp]]:
    with Display(600, 300) as display:
        running = RunningApp(display, APPS[request.param])
        try:
            yield request.param, display, running
        finally:
            running.stop()


@pytest.mark.parametrize("shape", sorted(ACTIONS))
def test_a_double_click_selects_the_word_and_a_letter_replaces_it(
    app: tuple[str, Display, RunningApp], shape: str
) -> None:
    toolkit, display, running = app
    double_click, type_z = ACTIONS[shape]
    x, y = running.world()
    with ComputerTool(display) as tool:
        assert tool.model_size == (600, 300)  # the model's points are the screen's
        result: Any = tool(double_click(x, y))
        assert not result.is_error, result.text
        running.wait_for("selected world")
        result = tool(type_z)
        assert not result.is_error, result.text
        running.wait_for("text hello Z")
    presses = [line for line in running.lines if line.startswith("press ")]
    assert presses == DOUBLE_CLICK_PRESSES[toolkit]  # the entry only, one double-click
