"""An animation's pause: the app is asked whether it still runs while the quiet lasts
(not after it), and the result's frame is grabbed and encoded during that quiet, used
only when nothing at all is drawn after it.

The wait's logic runs on a clock the test moves; the frame's reuse on a real Xvfb with
settle_scene_app.py's spinner, every click checked in the app's log.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.desktop import ComputerTool, SettleOptions
from viewfinder.desktop.settle import settle
from viewfinder.desktop.settle_waits import EARLY_MARGIN_S, EARLY_QUIET_S, MAX_EARLY
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

sys.path.insert(0, str(Path(__file__).parent))
from timed_changes import TimedChanges

APP = Path(__file__).parent / "settle_scene_app.py"
RED = (0xD0, 0x30, 0x30)
PANEL = (200, 190)  # the panel's centre (the screen is the model's size: no scaling)
SPIN = (300, 70)  # a spot of the canvas: a click there starts the spinner
GREEN = (0, 0xFF, 0)
ELSEWHERE = (800, 600)  # the centre of another client's window, away from the app's


class _Ping:
    """A ping to the app, answered ``delay`` s after it was sent."""

    def __init__(self, clock: list[float], delay: float) -> None:
        self.clock = clock
        self.at = clock[0] + delay

    def answered(self) -> bool:
        return self.clock[0] >= self.at

    def wait(self, timeout: float) -> bool:
        if self.answered():
            return True
        if self.at <= self.clock[0] + timeout:
            self.clock[0] = self.at
            return True
        self.clock[0] += timeout
        return False


SPIN_FRAMES = [0.03 * n for n in range(1, 21)]  # a frame every 30 ms, the last at 0.6 s


def _spin(delay: float, extra: tuple[float, ...] = (), **kwargs: Any) -> tuple[Any, list[float]]:
    """A settle after a click that starts SPIN_FRAMES (then ``extra``), the app
    answering each ping ``delay`` s after it was sent; the report and the pings' times."""
    clock = [0.0]
    asked: list[float] = []

    def recheck() -> _Ping:
        asked.append(clock[0])
        return _Ping(clock, delay)

    report = settle(
        TimedChanges(clock, SPIN_FRAMES + list(extra)), SettleOptions(), started=0.0,
        recheck=recheck, clock=lambda: clock[0], **kwargs,
    )  # fmt: skip
    return report, asked


def test_an_app_that_answers_during_the_quiet_adds_no_grace_after_it() -> None:
    """The app answers at once: the wait ends when the rhythm's quiet ends, not a grace
    later. It was asked once, when the spinner's next frame was overdue."""
    report, asked = _spin(delay=0.0005)
    quiet = report.quiet_s
    assert quiet is not None and 0.13 < quiet <= 0.25  # 3 frames of 30 ms, plus 50 ms
    assert report.changes == 20 and report.settled
    assert report.waited_s == pytest.approx(0.6 + quiet, abs=0.005)
    assert len(asked) == 1 and 0.6 + 0.045 <= asked[0] < 0.6 + quiet


def test_a_held_app_is_waited_for_and_the_frame_it_draws_then_is_seen() -> None:
    """A loaded machine holds the app 0.4 s, past the quiet; the frame it draws once it
    runs again (0.45 s after the pause began) is the action's, and the wait goes on."""
    report, asked = _spin(delay=0.4, extra=(1.05,))
    assert report.changes == 21, report
    assert report.waited_s > 1.05 + SettleOptions().quiet
    assert asked[0] < 0.6 + 0.1  # asked while the quiet ran, not after it


def test_a_held_app_that_draws_nothing_ends_the_wait_a_grace_after_its_answer() -> None:
    report, _ = _spin(delay=0.4)
    grace = SettleOptions().grace
    assert report.changes == 20 and report.settled
    assert report.waited_s == pytest.approx(0.6 + 0.05 + 0.4 + grace, abs=0.01)


def test_the_screen_is_taken_ahead_once_quiet_at_most_a_few_times_never_near_the_deadline() -> None:
    """``early`` comes once the screen was quiet a moment after a change (the spinner's
    first frames, before its rhythm is known), and when an animation paused; at most
    MAX_EARLY times a wait."""
    calls: list[float] = []
    clock = [0.0]
    report = settle(
        TimedChanges(clock, [0.03]), SettleOptions(), started=0.0,
        early=lambda: calls.append(clock[0]), clock=lambda: clock[0],
    )  # fmt: skip
    assert calls == [pytest.approx(0.03 + EARLY_QUIET_S)] and report.settled
    calls.clear()
    # the spinner's first frame; not the frames close behind it; its two pauses
    report, _ = _spin(delay=0.0005, extra=(0.7,), early=lambda: calls.append(clock[0]))
    assert len(calls) == 3 and report.changes == 21
    # small changes 75 ms apart, waited for until patience ends: each is taken ahead
    many = [0.075 * n for n in range(1, 12)]
    clock = [0.0]
    calls.clear()
    settle(
        TimedChanges(clock, many), SettleOptions(), started=0.0, early=lambda: calls.append(0),
        measure=lambda: 300, clock=lambda: clock[0],
    )  # fmt: skip
    assert len(calls) == MAX_EARLY
    # a frame every 30 ms until 1.89 s: the app is asked 60 ms before the 2 s deadline,
    # too close to grab and encode a frame ahead
    clock = [0.0]
    pinged: list[float] = []

    def recheck() -> _Ping:
        pinged.append(clock[0])
        return _Ping(clock, 0.0005)

    calls.clear()
    settle(
        TimedChanges(clock, [0.03 * n for n in range(1, 64)]), SettleOptions(), started=0.0,
        recheck=recheck, early=lambda: calls.append(clock[0]), clock=lambda: clock[0],
    )  # fmt: skip
    assert pinged == [pytest.approx(1.94)]
    assert 2.0 - pinged[0] < EARLY_MARGIN_S
    assert calls and max(calls) < 0.2  # the first frames' only


# -- on a real display --------------------------------------------------------------------


@pytest.fixture
def display() -> Iterator[Display]:
    with Display(1024, 768) as running:
        yield running


def _spin_and_settle(
    tool: ComputerTool, display: Display, draw_after_early: bool
) -> tuple[Any, list[Any]]:
    """Click the spinner (it stops after 0.4 s and recolours the panel) with the
    ComputerTool's own grabs and change watch; ``draw_after_early``: a green window of
    another client is mapped away from the app's once the frame was grabbed during the
    pause. The frame returned, and the frames grabbed during the pause."""
    from Xlib.display import Display as XDisplay

    frames = tool.frames
    before = frames.before_action()
    prepared: list[Any] = []
    other = XDisplay(display.env()["DISPLAY"])

    def prepare(frame: Any, _at: Any) -> None:
        prepared.append(frame)
        if draw_after_early and len(prepared) == 1:
            screen = other.screen()
            x, y = ELSEWHERE
            window = screen.root.create_window(
                x - 50, y - 50, 100, 100, 0, screen.root_depth,
                background_pixel=0x00FF00, override_redirect=True,
            )  # fmt: skip
            window.map()
            other.sync()

    try:
        started = time.monotonic()
        subprocess.run(
            ["xdotool", "mousemove", str(SPIN[0]), str(SPIN[1]), "click", "1"],
            env=display.env(),
            check=True,
        )
        report, frame, _ = frames.settle_after(
            before, started, expect_change=True, pointer=True, recheck=lambda: None,
            prepare=prepare,
        )  # fmt: skip
    finally:
        other.close()
    assert report.changed and report.settled, report
    return frame, prepared


@pytest.mark.parametrize("draw_after_early", [False, True])
def test_the_frame_grabbed_during_the_pause_is_returned_only_if_nothing_was_drawn_after(
    display: Display, draw_after_early: bool
) -> None:
    """The spinner's last quiet: the frame grabbed then is the one returned, and shows
    the panel's new colour. When anything is drawn after that grab (another client's
    window, away from the action's: no change of the action's), the screen is grabbed
    again and shows it."""
    command = [sys.executable, str(APP), "spinner", "--late", "0", "--stop", "400"]
    with LoggedApp(command, display.env()) as app, ComputerTool(display) as tool:
        frame, prepared = _spin_and_settle(tool, display, draw_after_early)
        assert app.wait_for("click spin") == ["click spin"]
        assert app.wait_for("drawn 1") == ["drawn 1"]
        assert prepared, "no frame was grabbed during the pause"
        assert frame.getpixel(PANEL) == RED
        if draw_after_early:  # painted after the first: a later pause's grab or a new one
            assert frame is not prepared[0], len(prepared)
            assert frame.getpixel(ELSEWHERE) == GREEN
        else:
            assert frame is prepared[-1]
        assert app.said() == []


# -- patience ---------------------------------------------------------------------------


def _blinking(delay: float, effect: float | None) -> tuple[Any, list[float]]:
    """A settle after a click in an app whose caret blinks every 100 ms (small changes,
    from 0.13 s), the app answering each ping ``delay`` s after it was sent (drawing
    nothing while it is held) and drawing a big change at ``effect`` (None: never);
    the report and the pings' times."""
    clock = [0.0]
    asked: list[float] = []

    def recheck() -> _Ping:
        asked.append(clock[0])
        return _Ping(clock, delay)

    held = (0.45, 0.45 + delay)  # the app is asked a grace before patience ends
    caret = [0.13 + 0.1 * n for n in range(30)]
    times = [t for t in caret if not held[0] <= t <= held[1]] + [effect] * (effect is not None)
    times.sort()
    report = settle(
        TimedChanges(clock, times), SettleOptions(), started=0.0, recheck=recheck,
        measure=lambda: 10_000 if effect is not None and clock[0] >= effect else 10,
        clock=lambda: clock[0],
    )  # fmt: skip
    return report, asked


def test_an_app_that_answers_at_once_ends_the_wait_at_patience() -> None:
    """Only a caret's blinks: asked a grace before patience ends, the app answers at
    once, and the wait ends when patience does, as before it was asked."""
    options = SettleOptions()
    report, asked = _blinking(delay=0.0005, effect=None)
    assert asked == [pytest.approx(options.patience - options.grace)]
    assert report.small and report.settled
    assert report.waited_s == pytest.approx(options.patience, abs=0.005)


def test_an_app_held_past_patience_is_waited_for_and_its_due_effect_seen() -> None:
    """A loaded machine holds the app 0.3 s when it is asked; once it runs again it
    draws the effect its timer was due to draw (0.76 s): the wait sees it, and the
    report does not call the change small."""
    report, asked = _blinking(delay=0.3, effect=0.76)
    assert len(asked) == 1
    assert not report.small and report.changes == 5
    assert report.waited_s == pytest.approx(0.76 + SettleOptions().quiet, abs=0.005)


def test_a_held_app_that_draws_nothing_new_ends_the_wait_a_grace_after_its_answer() -> None:
    options = SettleOptions()
    report, asked = _blinking(delay=0.3, effect=None)
    assert report.small
    # answered 0.3 s after it was asked, and a grace after that
    assert report.waited_s == pytest.approx(asked[0] + 0.3 + options.grace, abs=0.005)
