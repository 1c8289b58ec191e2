"""Fixtures of the viewer's tests: a real Xvfb with a Tk board, real X input, a recorder
session made on it, viewers on loopback and a real Chromium (Playwright).

The expensive ones (display, browser, the recorded session) are made once per module.
"""

from __future__ import annotations

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

from viewfinder.core.testing import child_processes, wait_until
from viewfinder.viewer import ViewerServer, ViewerSettings
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
CHROMIUM = "/usr/bin/chromium"


class Board:
    """The running Tk board: where its parts are, and the lines it prints."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: queue.Queue[str] = queue.Queue()
        assert process.stdout is not None
        first = process.stdout.readline()
        if not first:
            raise RuntimeError(f"the Tk board did not start: {process.stderr}")
        self.layout: dict[str, list[int]] = json.loads(first)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.strip())

    def centre(self, name: str) -> tuple[int, int]:
        x, y, width, height = self.layout[name]
        return (x + width // 2, y + height // 2)

    def said(self, wanted: Callable[[str], bool], what: str, timeout: float = 20.0) -> str:
        """The first line printed from now on that ``wanted`` accepts."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"the board never said {what}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if wanted(line):
                return line

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    """One real Xvfb per module."""
    with Display(800, 600) as started:
        yield started


@pytest.fixture(scope="module")
def start_board(display: Display) -> Iterator[Callable[..., Board]]:
    """``start_board(offset=0)`` runs the Tk board on the module's display (moved
    ``offset`` pixels right); all are killed after the module."""
    boards: list[Board] = []

    def start(offset: int = 0) -> Board:
        process = subprocess.Popen(
            [sys.executable, str(HERE / "board_app.py"), "--offset", str(offset)],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        board = Board(process)
        boards.append(board)
        return board

    yield start
    for board in boards:
        board.stop()


@pytest.fixture(scope="module")
def xdotool(display: Display) -> Callable[..., None]:
    def run(*args: str) -> None:
        subprocess.run(["xdotool", *args], env=display.env(), check=True, timeout=20)

    return run


@pytest.fixture(scope="module")
def serve() -> Iterator[Callable[..., ViewerServer]]:
    """``serve(**settings)`` starts a viewer on loopback (port 0); all stop after the module,
    and then none of their live feeds may be left grabbing."""
    started: list[ViewerServer] = []

    def start(**settings: Any) -> ViewerServer:
        server = ViewerServer(ViewerSettings(port=0, **settings)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
    wait_until(
        lambda: not [t for t in threading.enumerate() if t.name.startswith("viewfinder-live")],
        "the live feeds to stop",
        timeout=10,
    )
    assert not [t for t in threading.enumerate() if t.name == "viewfinder-viewer-server"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per module, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--headless"]
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    opened.set_default_timeout(15000)
    try:
        yield opened
    finally:
        context.close()


@pytest.fixture(scope="module", autouse=True)
def nothing_left_running() -> Iterator[None]:
    """After each module: no ffmpeg, Xvfb or board started by it still runs."""
    before = child_processes("Xvfb") | child_processes("python") | child_processes("ffmpeg")
    yield
    wait_until(
        lambda: (
            not (
                (child_processes("Xvfb") | child_processes("python") | child_processes("ffmpeg"))
                - before
            )
        ),
        "the module's processes to end",
        timeout=20,
    )


def open_page(page: Any, url: str) -> None:
    """Go to ``url`` and wait until the page has rendered what it was given."""
    page.goto(url)
    page.wait_for_selector("body[data-ready='true']")


def manifest_lines(folder: Path) -> list[dict[str, Any]]:
    path = folder / "manifest.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class RecordedSession:
    """A recorder session made with real X input on the Tk board."""

    def __init__(self, folder: Path, board: Board) -> None:
        self.folder = folder
        self.board = board
        self.lines = manifest_lines(folder)


@pytest.fixture(scope="module")
def recorded(
    tmp_path_factory: pytest.TempPathFactory,
    display: Display,
    start_board: Callable[[], Board],
    xdotool: Callable[..., None],
) -> RecordedSession:
    """Clicks, typing, a key, a scroll, a double and a right click and a drag on the board,
    through xdotool (XTest), recorded by the X11 listener: eight manifest lines."""
    from viewfinder.recorder import PairingSettings, Recorder, X11RecordInput

    root = tmp_path_factory.mktemp("artifacts")
    folder = root / "session"
    board = start_board()
    recorder = Recorder(
        folder,
        "xvfb",
        backend_options={"display": display.name},
        input_source=X11RecordInput(display.name),
        interval=0.2,
        settings=PairingSettings(typing_pause=30.0),
    )

    def lines(count: int) -> None:
        wait_until(lambda: len(manifest_lines(folder)) >= count, f"{count} manifest lines")

    def at(name: str) -> list[str]:
        x, y = board.centre(name)
        return ["mousemove", str(x), str(y)]

    from viewfinder.recorder.video import SessionVideo

    video = SessionVideo(recorder.layout, display.name)
    try:
        with recorder:
            video.start()
            xdotool(*at("button"), "click", "1")
            board.said(lambda line: line == "clicked paint", "the click on Paint")
            lines(1)
            xdotool(*at("entry"), "click", "1")
            lines(2)
            xdotool("type", "hello")
            board.said(lambda line: line == "entry hello", "the typed text")
            xdotool("key", "Return")
            lines(4)
            xdotool(*at("list"), "click", "5", "click", "5", "click", "5")
            lines(5)
            time.sleep(0.6)  # the scroll burst ends before the next action
            xdotool("click", "--repeat", "2", "--delay", "80", "1")
            lines(6)
            xdotool(*at("corner"), "click", "3")
            board.said(lambda line: line == "right corner", "the right click")
            lines(7)
            x, y = board.layout["area"][:2]
            xdotool("mousemove", str(x + 20), str(y + 20), "mousedown", "1")
            for step in range(1, 6):
                xdotool("mousemove", str(x + 20 + step * 20), str(y + 20 + step * 12))
            xdotool("mouseup", "1")
            lines(8)
        video.stop()  # the run's video is noted in metadata.json once the recorder stopped
    finally:
        video.kill()  # only a recording that failed leaves an ffmpeg to end
    return RecordedSession(folder, board)
