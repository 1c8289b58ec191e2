"""Fixtures for the xvfb plugin tests: real Xvfb displays, X windows and a Tk probe."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import Xlib.display
from Xlib import X

from viewfinder.core.testing import child_processes, wait_until
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
#: Generous: the machine running the tests may be a loaded two-core box.
DEADLINE_S = 30.0


@pytest.fixture(scope="session", autouse=True)
def no_xvfb_left_running() -> Iterator[None]:
    """After all tests, no Xvfb started by them may still run."""
    before = child_processes("Xvfb")
    yield
    left = child_processes("Xvfb") - before
    assert not left, f"the tests left Xvfb processes running: {sorted(left)}"


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    """A 640x480 display shared by the tests of one module."""
    with Display(640, 480) as started:
        yield started


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private registry state directory; displays left in it are stopped afterwards."""
    from viewfinder.xvfb import registry

    directory = tmp_path / "state"
    monkeypatch.setenv(registry.STATE_DIR_ENV, str(directory))
    yield directory
    registry.stop_all_displays()


# -- X windows ------------------------------------------------------------------------


class ColourWindow:
    """A window filled with one colour, made over its own X connection."""

    def __init__(
        self,
        display_name: str,
        x: int,
        y: int,
        width: int,
        height: int,
        rgb: tuple[int, int, int],
        *,
        mapped: bool = True,
    ) -> None:
        self.conn = Xlib.display.Display(display_name)
        screen = self.conn.screen()
        red, green, blue = rgb
        self.window = screen.root.create_window(
            x,
            y,
            width,
            height,
            0,
            screen.root_depth,
            X.InputOutput,
            X.CopyFromParent,
            background_pixel=(red << 16) | (green << 8) | blue,
            # no window manager runs, but say so anyway: the window goes exactly where asked
            override_redirect=True,
        )
        self.id = self.window.id
        if mapped:
            self.window.map()
            self.conn.sync()
            wait_until(self.is_viewable, f"window 0x{self.id:x} to be mapped")
        else:
            self.conn.sync()

    def is_viewable(self) -> bool:
        return bool(self.window.get_attributes().map_state == X.IsViewable)

    def fill(self, rgb: tuple[int, int, int]) -> None:
        """Repaint the whole window in ``rgb``."""
        red, green, blue = rgb
        self.window.change_attributes(background_pixel=(red << 16) | (green << 8) | blue)
        self.window.clear_area()
        self.conn.sync()

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def colour_window() -> Iterator[Callable[..., ColourWindow]]:
    """``colour_window(display_name, x, y, w, h, rgb)`` makes a window, closed afterwards."""
    made: list[ColourWindow] = []

    def make(*args: Any, **kwargs: Any) -> ColourWindow:
        window = ColourWindow(*args, **kwargs)
        made.append(window)
        return window

    yield make
    for window in made:
        # its display may have been stopped or its connection killed already
        with contextlib.suppress(Exception):
            window.close()


# -- the Tk probe -------------------------------------------------------------------------


class TkProbe:
    """``tk_probe.py`` running on a display; collects the events it reports."""

    def __init__(self, display: Display, script: str = "tk_probe.py") -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / script)],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.ready = self.wait_for(lambda event: event["type"] == "ready", "the Tk probe")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(json.loads(line))

    def wait_for(
        self, match: Callable[[dict[str, Any]], bool], what: str, timeout: float = DEADLINE_S
    ) -> dict[str, Any]:
        """The first event (seen before or arriving later) that ``match`` accepts."""
        for event in self.events:
            if match(event):
                return event
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (self.process.poll() is not None and self._lines.empty()):
                stderr = self.process.stderr.read() if self.process.poll() is not None else ""
                pytest.fail(f"no {what} event within {timeout:g}s; saw {self.events}\n{stderr}")
            try:
                event = self._lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            self.events.append(event)
            if match(event):
                return event

    def clear(self) -> None:
        self.events.clear()

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def tk_probe(display: Display) -> Iterator[TkProbe]:
    probe = TkProbe(display)
    yield probe
    probe.close()


@pytest.fixture
def tk_text(display: Display) -> Iterator[TkProbe]:
    """``tk_text_probe.py``: a Tk Text that reports what it received on F12."""
    probe = TkProbe(display, "tk_text_probe.py")
    yield probe
    probe.close()
