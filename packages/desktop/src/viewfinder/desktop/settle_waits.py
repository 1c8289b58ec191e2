"""The waits :func:`viewfinder.desktop.settle.settle` is made of: the first change (the
app's answer to the ping behind the action heard meanwhile), an animation's rhythm, and
its pause (the app asked again while the quiet runs on).

Each wait is bounded by the time it is given, and each loop by a count.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from typing import Protocol

from viewfinder.desktop.changes import ScreenChanges

#: An animation: this many changes (or more) in one wait set its quiet by their rhythm.
RHYTHM_CHANGES = 4
#: Quiet after an animation's frames: this many times their median interval, plus quiet.
RHYTHM_FACTOR = 3.0
#: The longest quiet an animation's rhythm may ask for, in seconds.
RHYTHM_MOST = 0.25
#: Only frames this close together (or closer) are an animation's: a spinner or a
#: progress bar draws 15-60 frames a second, a caret blinks every 0.1-0.6 s and is
#: quiet in between.
RHYTHM_FRAME_S = 0.07
#: An animation's app is asked whether it still runs this many frame intervals after the
#: last change (at least ``quiet``): its next frame was due by then.
ASK_FRAMES = 1.5
#: ``early`` is not called this close to the deadline (a grab and an encode may cost that).
EARLY_MARGIN_S = 0.1
#: After a change, ``early`` is called once the screen was quiet this long (an effect
#: drawn in steps draws them within a few milliseconds), if the wait goes on after it.
EARLY_QUIET_S = 0.01
#: ``early`` is called at most this many times a wait (each may cost a grab and an encode).
MAX_EARLY = 6
#: While the app has not answered, changes and its answer are looked at in turn this often.
PING_SLICE_S = 0.004


class InputHandled(Protocol):
    """Whether the app an action went to has handled it (a ping queued behind the
    action: :meth:`viewfinder.xvfb.input.XInput.ask_handled`)."""

    def answered(self) -> bool: ...

    def wait(self, timeout: float) -> bool: ...


def call_early(
    early: Callable[[], object] | None, left: int, deadline: float, clock: Callable[[], float]
) -> int:
    """Call ``early`` unless none is left or the deadline is near; how many are left."""
    if early is None or not left or deadline - clock() <= EARLY_MARGIN_S:
        return left
    early()
    return left - 1


def paused(
    changes: ScreenChanges,
    again: InputHandled | None,
    end: float,
    deadline: float,
    grace: float,
    clock: Callable[[], float],
) -> bool:
    """An animation's quiet, the app asked (``again``) once its next frame was due: wait
    until ``end``, and past it until the app has answered and drawn nothing for
    ``grace`` after its answer (all within ``deadline``). True when a change came."""
    answered_at: float | None = None
    for _ in range(100_000):  # bounded: each turn waits PING_SLICE_S or returns
        now = clock()
        if answered_at is None and again is not None and again.answered():
            answered_at = now
        if again is None:
            until = end
        elif answered_at is None:
            until = deadline
        else:
            until = max(end, answered_at + grace)
        until = min(until, deadline)
        if now >= until:
            return changes.wait(0.0)
        listening = again is not None and answered_at is None
        if changes.wait(min(PING_SLICE_S, until - now) if listening else until - now):
            return True
    return changes.wait(0.0)


def rhythm_quiet(times: list[float], quiet: float) -> tuple[float, float]:
    """The quiet an animation's rhythm asks for (see the module docstring), from the
    times of the changes seen so far, and the rhythm's frame interval (0: none)."""
    if len(times) < RHYTHM_CHANGES:
        return quiet, 0.0
    recent = times[-(RHYTHM_CHANGES + 2) :]
    interval = statistics.median(b - a for a, b in itertools.pairwise(recent))
    if interval > RHYTHM_FRAME_S:
        return quiet, 0.0
    return max(quiet, min(RHYTHM_MOST, RHYTHM_FACTOR * interval + quiet)), interval


def first_change(
    changes: ScreenChanges,
    handled: InputHandled | None,
    until: float,
    grace: float,
    hold_until: float,
    clock: Callable[[], float],
) -> bool:
    """Wait for the action's first change until ``until``; True when one came. Once the
    app has answered the ping behind the action, only ``grace`` more (and the hold)."""
    if handled is None:
        return changes.wait(max(0.0, until - clock()))
    for _ in range(100_000):  # bounded: each turn waits PING_SLICE_S or returns
        now = clock()
        if now >= until:
            return changes.wait(0.0)
        if changes.wait(min(PING_SLICE_S, until - now)):
            return True
        if handled.answered():
            # Handled: what it draws for the action is on its way; grace covers the
            # app's idle redraw and the server's drawing.
            end = min(until, max(clock() + grace, hold_until))
            return changes.wait(max(0.0, end - clock()))
    return changes.wait(max(0.0, until - clock()))
