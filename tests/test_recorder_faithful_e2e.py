"""What was done is what is recorded: typed text and drags from real X input on a Tk app.

xdotool types through XTest, remapping a spare keycode for every character that is not
on the keymap; it drags with press, motions and release. The Tk app prints what it
received; the manifest must say the same, and a cache built from the recording must
replay the same drag onto the canvas.
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
from PIL import Image
from typer.testing import CliRunner

from viewfinder.cache import CacheExecutor, ExecutionSettings, ReplayStatus, build_cache
from viewfinder.cli.app import build_app
from viewfinder.core.testing import wait_until
from viewfinder.recorder import PairingSettings, Recorder, X11RecordInput
from viewfinder.xvfb import Display

APP = Path(__file__).parents[1] / "packages/recorder/tests/typing_canvas_app.py"
DEADLINE_S = 30.0
#: Latin-1 off the US keymap, a symbol, CJK, and a character outside the BMP.
CORPUS = ["héllo ✓ 日本", "日本語", "👍"]
#: The toggle patch's colours (typing_canvas_app.py).
TOGGLE_OFF, TOGGLE_ON = (0x20, 0x40, 0xC0), (0xE0, 0x80, 0x20)


class App:
    """typing_canvas_app.py on a display, and the JSON lines it printed."""

    def __init__(self, display: Display) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(APP)],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self._lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.next("ready")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(json.loads(line))

    def next(self, key: str) -> Any:
        """The value of the next line that has ``key`` (waiting for it)."""
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            if key in line:
                return line[key]
        pytest.fail(f"the app printed no {key!r} within {DEADLINE_S:g}s; saw {self.seen}")

    def close(self) -> None:
        self.process.kill()
        self.process.wait(10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(640, 480) as started:
        yield started


@pytest.fixture
def xdotool(display: Display) -> Callable[..., None]:
    """Run xdotool on the test display (real X input through XTest)."""

    def run(*args: str) -> None:
        subprocess.run(["xdotool", *args], env=display.env(), check=True, timeout=20)

    return run


@pytest.fixture
def app(display: Display) -> Iterator[App]:
    started = App(display)
    try:
        yield started
    finally:
        started.close()


def recording(folder: Path, display: Display) -> Recorder:
    return Recorder(
        folder,
        "xvfb",
        backend_options={"display": display.name},
        input_source=X11RecordInput(display.name),
        settings=PairingSettings(typing_pause=60),
    )


def manifest(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]


def test_typed_text_is_recorded_as_the_app_received_it(
    tmp_path: Path,
    display: Display,
    app: App,
    xdotool: Callable[..., None],
) -> None:
    # xdotool remaps a spare keycode per character; a loaded Tk now and then looks the
    # keycode up after the remap is gone and gets nothing. That is the app's loss, not
    # the recording's: a line is typed again until the app got it whole. Each line the
    # app got whole must be recorded exactly so; a line it lost a character of is
    # recorded as typed or as received.
    folder = tmp_path / "typed"
    received: list[str] = []
    attempts: list[str] = []
    with recording(folder, display) as recorder:
        xdotool("mousemove", "100", "38", "click", "1")
        for text in CORPUS:
            for _ in range(3):
                xdotool("type", "--delay", "40", text)
                xdotool("key", "Return")
                attempts.append(text)
                received.append(app.next("typed"))
                if received[-1] == text:
                    break
        wait_until(lambda: recorder.events >= 1 + 2 * len(received), "every line written")
    assert [text for text in CORPUS if text in received] == CORPUS
    lines = manifest(folder)
    recorded = [line["text"] for line in lines if line["kind"] == "type"]
    assert len(recorded) == len(received)
    for typed, got, wrote in zip(attempts, received, recorded, strict=True):
        assert wrote == got if got == typed else wrote in (typed, got)
    assert [line["kind"] for line in lines] == ["click", *["type", "key"] * len(received)]


def test_a_drag_is_recorded_with_its_path_and_replayed_as_a_drag(
    tmp_path: Path,
    display: Display,
    app: App,
    xdotool: Callable[..., None],
) -> None:
    folder = tmp_path / "dragged"
    with recording(folder, display) as recorder:
        xdotool("mousemove", "350", "200", "mousedown", "1")
        for x, y in [(380, 230), (420, 300), (470, 350), (500, 380)]:
            xdotool("mousemove", str(x), str(y))
        xdotool("mouseup", "1")
        done = app.next("drag")
        wait_until(lambda: recorder.events >= 1, "the drag's line")
    assert done["press"] == [350, 200] and done["release"] == [500, 380] and done["moves"] >= 3
    (line,) = manifest(folder)
    assert line["kind"] == "drag"
    assert line["start_position"] == {"x": 350, "y": 200}
    assert line["position"] == {"x": 500, "y": 380}
    assert line["duration_s"] > 0
    path = [point[:2] for point in line["path"]]
    assert path[0] == [350, 200] and path[-1] == [500, 380] and 2 <= len(path) <= 5
    shown = CliRunner().invoke(build_app(), ["record", "show", str(folder)])
    assert "drag (350, 200) -> (500, 380)" in shown.output, shown.output
    cache = build_cache(folder)
    assert cache.trajectory[0].input == {
        "action": "left_click_drag",
        "start_coordinate": [350, 200],
        "coordinate": [500, 380],
    }
    app.close()
    fresh = App(display)
    try:
        with display.backend() as backend:
            result = CacheExecutor(backend, ExecutionSettings(delay_time_between_actions=0)).run(
                cache
            )
        assert result.status is ReplayStatus.COMPLETED, result.message
        replayed = fresh.next("drag")
        assert (replayed["press"], replayed["release"]) == (done["press"], done["release"])
        assert replayed["moves"] >= 1
    finally:
        fresh.close()


def test_each_click_of_a_quick_run_gets_the_frame_from_just_before_it(
    tmp_path: Path,
    display: Display,
    app: App,
    xdotool: Callable[..., None],
) -> None:
    # Clicks 100 ms apart on a toggle: every frame must show the state the click flipped.
    # (50 ms apart, a loaded machine's Tk had not always repainted the last flip before
    # the next press: that frame then rightly showed the older state.)
    folder = tmp_path / "quick"
    settings = PairingSettings(typing_pause=60, double_click_interval=0)
    clicks = 20
    with Recorder(
        folder,
        "xvfb",
        backend_options={"display": display.name},
        input_source=X11RecordInput(display.name),
        settings=settings,
    ) as recorder:
        assert recorder.frames.follows_damage
        xdotool("mousemove", "490", "30", "click", "--repeat", str(clicks), "--delay", "100", "1")
        states = [app.next("toggle") for _ in range(clicks)]
        wait_until(lambda: recorder.events >= clicks, "every click written")
    assert states == [index % 2 == 0 for index in range(clicks)]  # the app saw each click
    colours = []
    for seq in range(clicks):
        with Image.open(folder / "screenshots" / f"{seq}.png") as frame:
            colours.append(frame.convert("RGB").getpixel((455, 25)))
    expected = [TOGGLE_OFF if seq % 2 == 0 else TOGGLE_ON for seq in range(clicks)]
    assert colours == expected
    # The cache built from it replays on the unchanged app without a pause between
    # clicks: each check waits for the previous click's repaint (the settle window).
    cache = build_cache(folder)
    app.close()
    fresh = App(display)
    try:
        with display.backend() as backend:
            settings = ExecutionSettings(delay_time_between_actions=0)
            result = CacheExecutor(backend, settings).run(cache)
        assert result.status is ReplayStatus.COMPLETED, result.message
        assert [fresh.next("toggle") for _ in range(clicks)] == states
    finally:
        fresh.close()


def test_a_layout_switched_while_recording_is_followed(
    tmp_path: Path,
    display: Display,
    app: App,
    xdotool: Callable[..., None],
) -> None:
    # On a German layout y and z swap keys: a stale US keymap would record "zy".
    folder = tmp_path / "layout"
    try:
        with recording(folder, display) as recorder:
            xdotool("mousemove", "100", "38", "click", "1")
            subprocess.run(["setxkbmap", "-layout", "de"], env=display.env(), check=True)
            xdotool("type", "--delay", "20", "yz")
            xdotool("key", "Return")
            received = app.next("typed")
            wait_until(lambda: recorder.events >= 3, "every line written")
    finally:
        subprocess.run(["setxkbmap", "-layout", "us"], env=display.env(), check=True)
    assert received == "yz"
    assert [line.get("text") for line in manifest(folder) if line["kind"] == "type"] == ["yz"]
