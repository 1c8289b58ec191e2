"""An OpenAI drag along a path reaches a busy app corner by corner.

Tk folds a motion into the next one queued behind it; an app slow to handle motion
(30 ms each, busy_trail_app.py) would be told of a path with its corners cut. The
ComputerTool waits at each corner until the app under the pointer answered a ping.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from viewfinder.desktop import ComputerTool
from viewfinder.xvfb import Display

HERE = Path(__file__).parent


def test_a_busy_app_is_told_of_every_corner_of_a_drag() -> None:
    corners = [(50, 50), (350, 50), (350, 250), (50, 250), (50, 60), (300, 60), (300, 240)]
    with Display(400, 300) as display:
        app = subprocess.Popen(
            [sys.executable, str(HERE / "busy_trail_app.py")],
            env=display.env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert app.stdout is not None
            assert app.stdout.readline().strip() == "ready"
            with ComputerTool(display) as tool:
                result = tool({"type": "drag", "path": [{"x": x, "y": y} for x, y in corners]})
            assert not result.is_error, result.text
            points = []
            for line in app.stdout:  # until the release (the app reports it last)
                if line.strip() == "released":
                    break
                _, x, y = line.split()
                points.append((int(x), int(y)))
        finally:
            app.kill()
            app.wait(timeout=10)
    missing = [corner for corner in corners[1:] if corner not in points]
    assert missing == [], f"corners the app was never told of: {missing} (it saw {points})"
