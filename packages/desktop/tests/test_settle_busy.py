"""A busy app: the wait for an action's effect counts from when the app handled it.

The app is stopped (SIGSTOP) while it is clicked, as a loaded machine or a long
computation would hold it: the click waits in its queue, and its effect (a repaint
150 ms after the click) comes only once it runs again. The ComputerTool asks the app,
with a ping queued behind the click, whether it has handled it, and waits for that
before it calls the action changeless.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.desktop import ComputerTool
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
BLUE = (0, 0, 255)


@pytest.fixture
def canvas() -> Iterator[tuple[Display, subprocess.Popen[str]]]:
    with Display(300, 200) as display:
        app = subprocess.Popen(
            [sys.executable, str(HERE / "busy_canvas_app.py")],
            env=display.env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert app.stdout is not None and app.stdout.readline().strip() == "ready"
            yield display, app
        finally:
            os.kill(app.pid, signal.SIGCONT)
            app.kill()
            app.wait(timeout=10)


def stopped_for(app: subprocess.Popen[str], seconds: float) -> threading.Timer:
    os.kill(app.pid, signal.SIGSTOP)
    timer = threading.Timer(seconds, os.kill, (app.pid, signal.SIGCONT))
    timer.start()
    return timer


def test_the_effect_of_a_click_a_busy_app_handles_late_is_in_the_result(
    canvas: tuple[Display, subprocess.Popen[str]],
) -> None:
    display, app = canvas
    with ComputerTool(display) as tool:
        timer = stopped_for(app, 0.8)  # past the 0.5 s wait for a first change
        result = tool({"action": "left_click", "coordinate": [150, 100]})
        timer.join()
    assert not result.is_error, result.text
    assert result.screenshot is not None and result.screenshot.pixel(150, 100) == BLUE
    assert result.settle is not None and result.settle.busy_s is not None
    assert result.settle.busy_s >= 0.5 and result.settle.changed  # past the first wait
    assert "the app was busy: it handled the action after" in result.text


def test_an_app_that_never_handles_the_click_is_said_by_the_deadline(
    canvas: tuple[Display, subprocess.Popen[str]],
) -> None:
    display, app = canvas
    with ComputerTool(display) as tool:
        timer = stopped_for(app, 3.0)  # past the 2 s deadline
        hung = tool({"action": "left_click", "coordinate": [150, 100]})
        timer.join()
        assert hung.settle is not None and not hung.settle.handled
        assert "the app had not handled the action by the 2 s deadline" in hung.text
        assert hung.screenshot is not None and hung.screenshot.pixel(150, 100) != BLUE
        # running again, it draws the click it held; the tool goes on
        assert app.stdout is not None and app.stdout.readline().strip() == "painted"
        after = tool({"action": "screenshot"})
        assert after.screenshot is not None and after.screenshot.pixel(150, 100) == BLUE
