"""A double-click through both vendors' action shapes selects a word in a GTK entry, a
Tk entry and a Qt 5 and Qt 6 line edit, and a typed letter replaces it; the clicks of
separate actions stay separate.

The toolkits count presses however close together they come, but only within their
double-click time (GTK and Qt 400 ms, Tk 500 ms): these guard the pause between the
clicks (xvfb/multiclick.py) from growing past it, and the wait before an action's first
press from letting it join the click before. Each app logs every press with the widget
it went to and how many clicks it counted, its entry's selection and its text.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.core import ActionError
from viewfinder.core.testing import wait_until
from viewfinder.desktop import ComputerTool
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
QT_VENV_PYTHON = str(HERE.parents[2] / ".venv-qt" / "bin" / "python")  # make setup
APPS = {
    "gtk": ["/usr/bin/python3", str(HERE / "multi_click_gtk_app.py")],  # Debian's python3-gi
    "tk": [sys.executable, str(HERE / "multi_click_tk_app.py")],
    "qt5": ["/usr/bin/python3", str(HERE / "multi_click_qt_app.py"), "pyqt5"],  # Debian's
    "qt6": [QT_VENV_PYTHON, str(HERE / "multi_click_qt_app.py"), "pyside6"],
}
#: The presses each toolkit reports for a double-click: GTK reports every press as
#: one, then the double-click as an event of its own.
DOUBLE_CLICK_PRESSES = {
    "gtk": ["press entry 1", "press entry 1", "press entry 2"],
    "tk": ["press entry 1", "press entry 2"],
    "qt5": ["press entry 1", "press entry 2"],
    "qt6": ["press entry 1", "press entry 2"],
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


def presses_once_quiet(running: RunningApp, count: int) -> list[str]:
    """The app's press lines, once ``count`` came and nothing more for a while (a press
    that joins a multi-click adds a line in GTK, and one too many would come late)."""
    wait_until(
        lambda: sum(line.startswith("press ") for line in running.lines) >= count,
        f"{count} presses",
    )
    settled: list[list[str]] = []

    def quiet() -> bool:
        now = [line for line in running.lines if line.startswith("press ")]
        settled.append(now)
        return len(settled) > 5 and settled[-6] == now

    wait_until(quiet, "no more presses", max_interval=0.05)
    return settled[-1]


def test_clicks_sent_back_to_back_stay_single_clicks(
    app: tuple[str, Display, RunningApp],
) -> None:
    # within the double-click time at one point, the toolkits would count the second
    # press as a double-click: on a list row, that opens it
    _, display, running = app
    x, y = running.world()
    display.input.click(x, y)
    display.input.click(x, y)
    assert presses_once_quiet(running, 2) == ["press entry 1", "press entry 1"]


def test_a_double_click_right_after_a_double_click_is_not_a_triple_click(
    app: tuple[str, Display, RunningApp],
) -> None:
    toolkit, display, running = app
    x, y = running.world()
    with ComputerTool(display) as tool:
        for _ in range(2):
            result: Any = tool({"action": "double_click", "coordinate": [x, y]})
            assert not result.is_error, result.text
    expected = DOUBLE_CLICK_PRESSES[toolkit] * 2
    assert presses_once_quiet(running, len(expected)) == expected


@pytest.mark.parametrize("app", ["tk"], indirect=True)
def test_a_call_cancelled_while_its_click_waits_presses_nothing(
    app: tuple[str, Display, RunningApp],
) -> None:
    _, display, running = app
    x, y = running.world()
    cancelled = threading.Event()
    cancelled.set()
    display.input.click(x, y)
    display.input.interrupt = cancelled  # what a cancelled tool call sets
    try:
        with pytest.raises(ActionError, match="cancelled before its click"):
            display.input.click(x, y)
    finally:
        display.input.interrupt = None
    assert presses_once_quiet(running, 1) == ["press entry 1"]
