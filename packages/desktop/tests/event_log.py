"""event_log_app.py running on a display, its log lines read as they come (for tests)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from viewfinder.core.testing import wait_until

APP = Path(__file__).with_name("event_log_app.py")


class EventLog:
    """The app on ``display``; :attr:`lines` grows as it prints."""

    def __init__(self, display: Any) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(APP)],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        wait_until(lambda: "ready" in self.lines, "the event log app to start", timeout=20)
        layout = next(line for line in self.lines if line.startswith("layout "))
        self.layout: dict[str, list[int]] = json.loads(layout.removeprefix("layout "))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.strip())

    def mark(self) -> int:
        """Where the log is now: :meth:`since` gives the lines after it."""
        return len(self.lines)

    def since(self, mark: int) -> list[str]:
        return self.lines[mark:]

    def wait_for(self, mark: int, line: str) -> list[str]:
        """Wait until ``line`` is logged after ``mark``; the lines since then."""
        wait_until(lambda: line in self.since(mark), f"{line!r} in the log", timeout=10)
        return self.since(mark)

    def centre(self, name: str) -> tuple[int, int]:
        x, y, width, height = self.layout[name]
        return (x + width // 2, y + height // 2)

    def presses(self, mark: int) -> list[str]:
        """The button presses since ``mark`` (``press WIDGET BUTTON MODS``)."""
        return [line for line in self.since(mark) if line.startswith("press ")]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
