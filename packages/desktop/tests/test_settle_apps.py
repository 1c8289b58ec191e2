"""Settle on apps that draw the way real ones do (examples/settle_apps.py on a real Xvfb):
the frame returned is the one after the whole effect, the deadline holds on a screen that
never stops changing, and a change drawn after the tool returned is reported next time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.desktop import ComputerTool, SettleOptions
from viewfinder.desktop.changes import Damage, ScreenChanges
from viewfinder.desktop.settle import SettleMemory, settle

ROOT = Path(__file__).resolve().parents[3]
APPS = ROOT / "examples" / "settle_apps.py"
sys.path.insert(0, str(APPS.parent))
from settle_apps import panel_colour  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from timed_changes import TimedChanges  # noqa: E402

#: A spinner's frame every 30 ms for 1 s, then a panel's new colour, then nothing.
SPINNER_THEN_PANEL = [0.03 * n for n in range(1, 34)] + [1.02]


def rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


class SettleApp:
    """One mode of examples/settle_apps.py running on ``display``."""

    def __init__(self, display: Any, folder: Path, mode: str, *extra: str) -> None:
        self.state_path = folder / f"{mode}.json"
        self.process = subprocess.Popen(
            [sys.executable, str(APPS), mode, "--state", str(self.state_path), *extra],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"
        self.layout: dict[str, list[int]] = self.state()["layout"]

    def state(self) -> dict[str, Any]:
        return json.loads(self.state_path.read_text())

    def centre(self, name: str) -> tuple[int, int]:
        x, y, width, height = self.layout[name]
        return (x + width // 2, y + height // 2)

    def wait_for(self, check: Any, what: str) -> Any:
        from viewfinder.core.testing import wait_until

        return wait_until(lambda: check(self.state()), what, timeout=20)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


@pytest.fixture(scope="module")
def display() -> Iterator[Any]:
    from viewfinder.xvfb import Display

    with Display(1920, 1080) as running:
        yield running


@pytest.fixture
def start_app(display: Any, tmp_path: Path) -> Iterator[Any]:
    started: list[SettleApp] = []

    def start(mode: str, *extra: str) -> SettleApp:
        app = SettleApp(display, tmp_path, mode, *extra)
        started.append(app)
        return app

    yield start
    for app in started:
        app.stop()


#: A spot of the apps' window off every widget (examples/settle_apps.py).
PARK = (300, 40)


def click_go(tool: ComputerTool, app: SettleApp) -> Any:
    """Park the pointer off the button, then click Go; the result.

    The pointer rests inside the app's window: off it, with no window manager, the app
    loses the keyboard focus, and the click that brings it back redraws the caret app's
    focus ring (1834 px), which with the pressed relief passes ``small_change``: the
    click's first change is then big, and the wait does not go on for the panel.
    """
    tool({"action": "mouse_move", "coordinate": list(tool.scaling.to_model(*PARK))})
    result = tool(
        {"action": "left_click", "coordinate": list(tool.scaling.to_model(*app.centre("button")))}
    )
    assert not result.is_error, result.error
    return result


def panel_shown(tool: ComputerTool, app: SettleApp, shot: Any) -> tuple[int, int, int]:
    return shot.pixel(*tool.scaling.to_model(*app.centre("panel")))


@pytest.mark.parametrize("mode", ["two-step", "caret", "repaint", "instant"])
def test_the_frame_returned_shows_the_whole_effect(display: Any, start_app: Any, mode: str) -> None:
    """The button's relief (two-step), a blinking caret (caret) or nothing at all
    (repaint) comes first; the panel's new colour 150-250 ms later must be in the frame."""
    app = start_app(mode)
    with ComputerTool(display, target="XGA") as tool:
        for effect in range(1, 4):
            result = click_go(tool, app)
            app.wait_for(lambda s, n=effect: s["effects"] == n, f"effect {effect}")
            assert panel_shown(tool, app, result.screenshot) == rgb(panel_colour(effect)), (
                f"{result.text}; {result.settle}"
            )
            assert result.settle is not None and result.settle.changed and result.settle.settled


def test_an_app_held_past_patience_has_its_effect_in_the_frame(
    display: Any, start_app: Any
) -> None:
    """The button's relief shows at once; then the app is stopped (as a loaded machine
    holds it) past patience, before the panel's repaint was due. Asked whether it runs,
    it answers once it runs again and draws the panel: the frame returned shows it."""
    app = start_app("two-step")
    with ComputerTool(display, target="XGA") as tool:
        tool({"action": "mouse_move", "coordinate": [1000, 700]})
        hold = threading.Timer(0.1, os.kill, (app.process.pid, signal.SIGSTOP))
        resume = threading.Timer(0.9, os.kill, (app.process.pid, signal.SIGCONT))
        hold.start()
        resume.start()
        try:
            point = tool.scaling.to_model(*app.centre("button"))
            result = tool({"action": "left_click", "coordinate": list(point)})
        finally:
            hold.join()
            resume.join()
        app.wait_for(lambda s: s["effects"] == 1, "the effect")
        assert panel_shown(tool, app, result.screenshot) == rgb(panel_colour(1)), result.text
        assert result.settle is not None and result.settle.waited_s > 0.9


def test_a_screen_that_never_stops_changing_returns_at_the_deadline(
    display: Any, start_app: Any
) -> None:
    """A spinner turning every 30 ms never leaves 200 ms of quiet: the wait ends at its
    deadline, says so, shows the panel's effect, and grabbed the screen a bounded number
    of times."""
    app = start_app("spinner")
    options = SettleOptions(quiet=0.2, timeout=0.6, patience=0.0)
    with ComputerTool(display, target="XGA", settle=options) as tool:
        grabs = 0
        grab = tool.frames.grab

        def counted() -> Any:
            nonlocal grabs
            grabs += 1
            return grab()

        tool.frames.grab = counted  # type: ignore[method-assign]
        tool({"action": "mouse_move", "coordinate": [1000, 700]})
        grabs = 0
        result = tool(
            {
                "action": "left_click",
                "coordinate": list(tool.scaling.to_model(*app.centre("button"))),
            }
        )
        assert result.settle is not None
        assert result.settle.changed and not result.settle.settled
        assert result.settle.deadline_s == 0.6
        assert "still changing at the 0.6 s deadline" in result.text
        assert panel_shown(tool, app, result.screenshot) == rgb(panel_colour(1))
        # the frame before the action, one to measure the first change, the answer
        assert grabs <= 3


class _Spinner(ScreenChanges):
    """A screen that changes at every look, on a clock the test moves."""

    method = "test"

    def __init__(self, clock: list[float]) -> None:
        super().__init__()
        self.clock = clock

    def mark(self) -> Damage:
        return Damage()

    def wait(self, timeout: float) -> bool:
        self.clock[0] += 0.001
        return True


def test_the_deadline_holds_when_each_capture_costs_more_than_the_quiet_period() -> None:
    """Each measurement of a change takes 0.3 s (a grab at 4K on a busy machine) and the
    quiet period is 10 ms: the wait still ends at its 1 s deadline, after at most four
    measurements, saying it was still changing."""
    clock = [0.0]
    measured = 0

    def slow_measure() -> int:
        nonlocal measured
        measured += 1
        clock[0] += 0.3
        return 10  # always small: it goes on measuring until patience

    options = SettleOptions(quiet=0.01, timeout=1.0, patience=1.0)
    report = settle(
        _Spinner(clock), options, started=0.0, measure=slow_measure, clock=lambda: clock[0]
    )
    assert (report.changed, report.settled) == (True, False)
    assert measured <= 4 and report.deadline_s == 1.0
    assert clock[0] < 1.0 + 0.3 + 0.01  # (the fake clock) one measurement past the deadline


def test_a_change_drawn_after_the_tool_returned_is_reported_and_waited_for_next_time(
    display: Any, start_app: Any
) -> None:
    """With a short patience the click's frame comes before the panel's repaint 400 ms
    later; the next action says the screen changed after the last screenshot and shows
    it; the session then waits long enough for the same click."""
    app = start_app("repaint", "--delay", "400")
    options = SettleOptions(patience=0.1)
    with ComputerTool(display, target="XGA", settle=options) as tool:
        early = click_go(tool, app)
        app.wait_for(lambda s: s["effects"] == 1, "the late repaint")
        assert panel_shown(tool, app, early.screenshot) == rgb(panel_colour(0))
        assert "the screen changed after the last screenshot" not in early.text

        noticed = tool({"action": "mouse_move", "coordinate": [1000, 700]})
        assert "the screen changed after the last screenshot" in noticed.text, noticed.text
        assert noticed.before is not None
        assert panel_shown(tool, app, noticed.before) == rgb(panel_colour(1))
        assert noticed.settle is not None and noticed.settle.held_s >= 0.4

        learned = click_go(tool, app)
        app.wait_for(lambda s: s["effects"] == 2, "the second repaint")
        assert panel_shown(tool, app, learned.screenshot) == rgb(panel_colour(2)), learned.text


def test_long_typing_returns_once_the_app_has_drawn_it_all(display: Any, start_app: Any) -> None:
    """3000 characters (50 lines) take the Tk text box about a second to read; the frame
    returned shows the text box as it is once the app has read every key."""
    app = start_app("text")
    text = "\n".join(
        f"{line:02d} " + "abcdefghij" * 5 + "klmnopq"[: line % 7] for line in range(50)
    )
    with ComputerTool(display) as tool:
        result = tool({"action": "type", "text": text})
        assert result.settle is not None and result.settle.changed, result.text
        typed = sum(char.isprintable() for char in text)
        app.wait_for(lambda s: s["chars"] == typed, "every character read")
        later = tool({"action": "screenshot"})
    assert result.screenshot is not None and later.screenshot is not None
    x, y, width, height = app.layout["text"]
    box = (x, y, x + width, y + height)
    assert (
        result.screenshot.to_pil().crop(box).tobytes()
        == later.screenshot.to_pil().crop(box).tobytes()
    )


def test_the_memory_of_late_changes_is_bounded_and_fades() -> None:
    options = SettleOptions()
    memory = SettleMemory(actions=3)
    assert memory.hold(options) == 0.0
    memory.record(0.4)
    assert memory.hold(options) == pytest.approx(0.4 * 1.25 + options.quiet)
    memory.record(5.0)
    # never more than the wait for a first change, however late a change came
    assert memory.hold(options) == options.change_timeout + options.quiet
    for _ in range(3):
        memory.record(None)
    assert memory.hold(options) == 0.0
    memory.record(0.4)
    assert memory.hold(SettleOptions(adapt=False)) == 0.0


def test_a_big_change_after_patience_is_not_reported_as_small() -> None:
    """The spinner's frames are small and go on past patience; the panel that follows is
    big: the report says the screen changed, not that only a small change came."""
    clock = [0.0]

    def measure() -> int:
        return 100_000 if clock[0] >= 1.02 else 300  # the panel, else one arc

    report = settle(
        TimedChanges(clock, SPINNER_THEN_PANEL), SettleOptions(), started=0.0, measure=measure,
        clock=lambda: clock[0],
    )  # fmt: skip
    assert (report.changed, report.settled, report.changes) == (True, True, 34)
    assert report.small is False
    assert 1.02 < report.waited_s < 2.0


@pytest.mark.parametrize("mode", ["two-step", "caret"])
def test_a_click_right_after_a_click_there_shows_its_whole_effect(
    display: Any, start_app: Any, mode: str
) -> None:
    """A click at the place of the click before waits until the app would not take the
    two for a double-click (xvfb/multiclick.py). The wait comes before the frame paired
    with the click and before the settle's clock starts, so the panel's new colour
    150-250 ms after the press is in the frame, as after any click."""
    app = start_app(mode)
    with ComputerTool(display, target="XGA") as tool:
        go = list(tool.scaling.to_model(*app.centre("button")))
        for effect in range(1, 4):
            result = tool({"action": "left_click", "coordinate": go})
            assert not result.is_error, result.error
            assert panel_shown(tool, app, result.screenshot) == rgb(panel_colour(effect)), (
                result.text
            )
    app.wait_for(lambda s: s["effects"] == 3, "three effects, no double-click")
