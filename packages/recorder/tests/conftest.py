"""Fixtures for the recorder tests: a real Xvfb, a real Tk form, real X input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from viewfinder.core.testing import wait_until
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
#: Generous: the tests share a loaded two-core machine with other work.
DEADLINE_S = 30.0


def rgb(hex_colour: str) -> tuple[int, int, int]:
    value = hex_colour.lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    return (int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16))


def pixel(image: Image.Image, x: int, y: int) -> tuple[int, int, int]:
    value = image.convert("RGB").getpixel((x, y))
    assert isinstance(value, tuple)
    return (int(value[0]), int(value[1]), int(value[2]))


def read_frame(path: Path) -> Image.Image:
    with Image.open(path) as image:
        image.load()
        return image.convert("RGB")


class Form:
    """The running Tk form: where its widgets are and how to read its state off a frame."""

    GREY = (128, 128, 128)
    rgb = staticmethod(rgb)
    read = staticmethod(read_frame)

    def __init__(self, process: subprocess.Popen[str], layout: dict[str, Any]) -> None:
        self.process = process
        self.layout = layout

    def centre(self, name: str) -> tuple[int, int]:
        x, y, w, h = self.layout[name]
        return (x + w // 2, y + h // 2)

    def patch(self, image: Image.Image, name: str) -> tuple[int, int, int]:
        x, y, w, h = self.layout["patches"][name]
        return pixel(image, x + w // 2, y + h // 2)

    def entry_ink(self, image: Image.Image) -> int:
        """Dark pixels where the entry's first characters go (0 when it is empty).

        The band starts right of the caret and ends well left of the entry's centre,
        where the test clicks: Xvfb draws the mouse pointer into its framebuffer.
        """
        x, y, _, h = self.layout["entry"]
        box = image.crop((x + 6, y + 2, x + 110, y + h - 2)).convert("L")
        return sum(1 for value in box.tobytes() if value < 100)

    def top_row(self, image: Image.Image) -> int:
        """Index of the list row shown at the top of the list in ``image``."""
        x, y, w, _ = self.layout["listbox"]
        colour = pixel(image, x + w - 10, y + 2)
        rows = [rgb(c) for c in self.layout["rows"]]
        assert colour in rows, f"{colour} at the top of the list is no row colour"
        return rows.index(colour)


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    """One real Xvfb per test module (few at once on a shared machine)."""
    with Display(800, 600) as started:
        yield started


@pytest.fixture
def form(display: Display) -> Iterator[Form]:
    """The Tk form on ``display``; killed after the test."""
    process = subprocess.Popen(
        [sys.executable, str(HERE / "form_app.py")],
        env=display.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            pytest.fail(
                f"the Tk form did not start: {process.stderr.read() if process.stderr else ''}"
            )
        yield Form(process, json.loads(line))
    finally:
        process.kill()
        process.wait(10)


class Apps:
    """Starts programs on a display, each printing one line once its window is drawn."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[str]] = []

    def start(
        self, display: Display, program: list[str], env: dict[str, str] | None = None
    ) -> tuple[subprocess.Popen[str], str]:
        """The running program (with ``env`` added to the display's), and the line it printed."""
        app = subprocess.Popen(
            program,
            env={**display.env(), **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.started.append(app)
        assert app.stdout is not None
        line = app.stdout.readline()
        assert line.strip(), f"{program[-1]} did not start (exit {app.poll()})"
        return app, line

    @staticmethod
    def stop(app: subprocess.Popen[str]) -> None:
        app.kill()
        app.wait(10)


@pytest.fixture(scope="module")
def calm_gtk(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for a GTK 3 app that neither blinks its caret nor animates: a repaint
    just before a press leaves the press's element out, and these come at any time."""
    config = tmp_path_factory.mktemp("gtk-config")
    (config / "gtk-3.0").mkdir()
    (config / "gtk-3.0" / "settings.ini").write_text(
        "[Settings]\ngtk-cursor-blink=false\ngtk-enable-animations=false\n"
    )
    return {"XDG_CONFIG_HOME": str(config)}


@pytest.fixture(scope="module")
def apps() -> Iterator[Apps]:
    """Start apps on a display; those still running are killed after the module."""
    launcher = Apps()
    yield launcher
    for app in launcher.started:
        launcher.stop(app)


@pytest.fixture
def kill_mid_session() -> Callable[[Path, Display, int], int]:
    """Run crashing_recorder.py on a display into a folder until its manifest has
    ``lines`` lines, then SIGKILL it; returns the pid it had."""

    def run(folder: Path, display: Display, lines: int) -> int:
        process = subprocess.Popen(
            [sys.executable, str(HERE / "crashing_recorder.py"), str(folder), display.name],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None and process.stdout.readline().strip() == "recording"
            manifest = folder / "manifest.jsonl"
            wait_until(
                lambda: manifest.exists() and manifest.read_bytes().count(b"\n") >= lines,
                f"{lines} manifest lines",
            )
        finally:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(10)
        assert process.returncode == -signal.SIGKILL
        return process.pid

    return run


@pytest.fixture
def xdotool(display: Display) -> Callable[..., None]:
    """Run xdotool on the test display (real X input through XTest)."""

    def run(*args: str) -> None:
        subprocess.run(["xdotool", *args], env=display.env(), check=True, timeout=20)

    return run


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """Every recorder thread a test started has ended when it is over."""
    before = set(threading.enumerate())
    yield

    def leaked() -> list[str]:
        return [
            thread.name
            for thread in threading.enumerate()
            if thread not in before and thread.name.startswith("viewfinder-") and thread.is_alive()
        ]

    deadline = time.monotonic() + 10
    while leaked() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not leaked(), f"threads left running: {leaked()}"
