"""A recorder session becomes a cache file, checked and replayed on a real Xvfb, also by CLI.

The screen is a few plain X windows (coloured rectangles standing in for buttons);
the recorder records clicks on them through the xvfb backend, then the windows are
moved or left alone and the cache is checked and replayed against them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import Xlib.display
from typer.testing import CliRunner
from Xlib import X

from viewfinder.cache import CacheExecutor, ExecutionSettings, ReplayStatus, build_cache
from viewfinder.cli.app import build_app
from viewfinder.core import Event, EventKind, Point
from viewfinder.recorder import Recorder, load_session
from viewfinder.xvfb import Display, XvfbBackend

DEADLINE_S = 30.0
#: name -> (x, y, width, height, colour): three "buttons" far enough apart that the
#: pointer resting on one is never inside another's 100 px region.
BUTTONS = {
    "left": (70, 70, 60, 30, 0x1E5AC8),
    "middle": (290, 210, 60, 30, 0x2E8B57),
    "right": (510, 350, 60, 30, 0xC8A032),
}
PARK = (620, 20)


def centre(name: str) -> tuple[int, int]:
    x, y, width, height, _ = BUTTONS[name]
    return (x + width // 2, y + height // 2)


class Buttons:
    """The buttons as override-redirect X windows on one connection."""

    def __init__(self, display_name: str) -> None:
        self.conn = Xlib.display.Display(display_name)
        screen = self.conn.screen()
        self.windows = {}
        for name, (x, y, width, height, colour) in BUTTONS.items():
            window = screen.root.create_window(
                x,
                y,
                width,
                height,
                0,
                screen.root_depth,
                X.InputOutput,
                X.CopyFromParent,
                background_pixel=colour,
                override_redirect=True,
            )
            # a white "label" off the centre: a plain centred rectangle has so few DCT
            # coefficients that phash tells it from an empty region by only ~8 bits
            label = window.create_window(
                8,
                10,
                20,
                10,
                0,
                screen.root_depth,
                X.InputOutput,
                X.CopyFromParent,
                background_pixel=0xFFFFFF,
            )
            label.map()
            window.map()
            self.windows[name] = window
        self.conn.sync()

    def move(self, name: str, x: int, y: int) -> None:
        self.windows[name].configure(x=x, y=y)
        self.conn.sync()

    def close(self) -> None:
        for window in self.windows.values():
            window.destroy()
        self.conn.sync()
        self.conn.close()


def wait_for_colour(backend: XvfbBackend, xy: tuple[int, int], colour: int) -> None:
    want = ((colour >> 16) & 255, (colour >> 8) & 255, colour & 255)
    deadline = time.monotonic() + DEADLINE_S
    while backend.grab().getpixel(xy) != want:
        if time.monotonic() > deadline:
            pytest.fail(f"{xy} never showed #{colour:06x}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(640, 480) as started:
        yield started


@pytest.fixture(scope="module")
def backend(display: Display) -> Iterator[XvfbBackend]:
    made = display.backend()
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def buttons(display: Display, backend: XvfbBackend) -> Iterator[Buttons]:
    made = Buttons(display.name)
    backend.act(Event(kind=EventKind.MOVE, position=Point(x=PARK[0], y=PARK[1])))
    for x, y, _, _, colour in BUTTONS.values():
        wait_for_colour(backend, (x + 2, y + 2), colour)
    yield made
    made.close()


@pytest.fixture
def session(tmp_path: Path, backend: XvfbBackend, buttons: Buttons) -> Path:
    """A recorder session: click left, middle, right, press Tab."""
    folder = tmp_path / "session"
    recorder = Recorder(folder, backend, interval=0.1)
    with recorder:
        deadline = time.monotonic() + DEADLINE_S
        while not recorder.layout.current.exists():  # the first frame, before any action
            assert time.monotonic() < deadline, "the recorder captured no frame"
            time.sleep(0.05)
        for name in ("left", "middle", "right"):
            x, y = centre(name)
            recorder.act(Event(kind=EventKind.CLICK, position=Point(x=x, y=y)))
        recorder.act(Event(kind=EventKind.KEY, keys=["Tab"]))
    return folder


def test_a_session_builds_a_cache_that_replays(
    session: Path, backend: XvfbBackend, buttons: Buttons
) -> None:
    assert [step.event.kind for step in load_session(session).steps] == [
        EventKind.CLICK,
        EventKind.CLICK,
        EventKind.CLICK,
        EventKind.KEY,
    ]
    cache = build_cache(session)
    assert [block.input.get("coordinate") for block in cache.trajectory] == [
        list(centre("left")),
        list(centre("middle")),
        list(centre("right")),
        None,
    ]
    assert [bool(block.visual_representation) for block in cache.trajectory] == [
        True,
        True,
        True,
        False,
    ]
    backend.act(Event(kind=EventKind.MOVE, position=Point(x=PARK[0], y=PARK[1])))
    settings = ExecutionSettings(delay_time_between_actions=0.1)
    result = CacheExecutor(backend, settings).run(cache.model_copy(deep=True))
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert [step.validated for step in result.steps] == [True, True, True, False]
    buttons.move("middle", 300, 20)
    wait_for_colour(backend, (302, 22), BUTTONS["middle"][4])
    backend.act(Event(kind=EventKind.MOVE, position=Point(x=PARK[0], y=PARK[1])))
    moved = CacheExecutor(backend, settings).run(cache)
    assert (moved.status, moved.step_index, moved.acted) == (ReplayStatus.NEEDS_AGENT, 1, [0])


def test_the_cli_builds_checks_and_replays_on_a_display(
    tmp_path: Path, session: Path, display: Display, backend: XvfbBackend, buttons: Buttons
) -> None:
    runner, app = CliRunner(), build_app()
    out = tmp_path / "session.json"
    built = runner.invoke(app, ["cache", "build", str(session), "-o", str(out)])
    assert built.exit_code == 0, built.output
    assert "4 steps, 3 hashed" in built.output
    checked = runner.invoke(app, ["cache", "check", str(out), "--display", display.name, "--json"])
    assert checked.exit_code == 0, checked.output
    assert [row["passed"] for row in json.loads(checked.output)] == [True, True, True]
    backend.act(Event(kind=EventKind.MOVE, position=Point(x=PARK[0], y=PARK[1])))
    replayed = runner.invoke(
        app, ["cache", "replay", str(out), "--display", display.name, "--delay", "0.1"]
    )
    assert replayed.exit_code == 0, replayed.output
    assert replayed.output.startswith("COMPLETED")
    buttons.move("right", 20, 400)
    wait_for_colour(backend, (22, 402), BUTTONS["right"][4])
    moved = runner.invoke(
        app, ["cache", "check", str(out), "--display", display.name, "--start", "2"]
    )
    assert moved.exit_code == 3 and "MISMATCH" in moved.output
    backend.act(Event(kind=EventKind.MOVE, position=Point(x=PARK[0], y=PARK[1])))
    stopped = runner.invoke(
        app,
        [
            "cache",
            "replay",
            str(out),
            "--display",
            display.name,
            "--delay",
            "0.1",
            "--report-dir",
            str(tmp_path / "why"),
        ],
    )
    assert stopped.exit_code == 3, stopped.output
    assert stopped.output.startswith("NEEDS_AGENT: Visual validation failed at step 2")
    assert (tmp_path / "why" / "step-2.png").exists()
    saved = json.loads(out.read_text())["metadata"]
    assert saved["execution_attempts"] == 2 and saved["failures"][0]["step_index"] == 2
