"""Settle: the screenshot after an action shows the whole effect, and comes by a deadline.

A fixed sleep after every action (Anthropic's reference implementation sleeps 2 s) is
both slow and unsafe: slow when the effect shows at once, unsafe when it takes longer.
Real apps draw an effect in steps: a Tk button shows its pressed relief at once and the
app's work 150-300 ms later; a page shows click feedback, then its fetched content; a
caret blinks meanwhile. :func:`settle` waits for what the action does:

1. **The first change**, at most ``change_timeout`` s (0.5) after the action. None: the
   action changed nothing, and the result says so. Skipped after ``wait``. Once the app
   the action went to has answered the ping sent behind it (it has handled the action)
   and nothing of its own changed for ``grace`` s (0.05) more, nothing will: the wait
   ends at once, as "no change" (not before the learned hold, below).
2. **A change worth waiting for.** Every change is measured against the frame before the
   action (:func:`~viewfinder.desktop.changes.changed_pixels`, only where the X server
   says something was drawn). While every change so far moved fewer than
   ``small_change`` pixels (a caret blink, a button's relief, the hover colour), the
   wait goes on until ``patience`` s (0.5) after the action, for a bigger one, and
   past it while the app, asked ``grace`` before, has not answered: a loaded machine
   can hold an app longer than patience, and the effect its timer was due to draw comes
   once it runs again. Typing is the exception: its effect is small by nature.
3. **Quiet**: no change for ``quiet`` s (0.05) after the last one, so an effect drawn in
   several steps is seen whole. An animation sets its own quiet: once 4 changes came at
   most 70 ms apart (their median interval), quiet lasts 3 times that interval plus
   ``quiet`` (at most 0.25 s), so one late frame of a spinner does not end the wait.
   Once its next frame is overdue (1.5 intervals, at least ``quiet``), the app is asked
   again (``recheck``), and heard while the quiet runs on: settled when the quiet is
   over, the app has answered, and it drew nothing for ``grace`` after its answer. A
   caret's blink is slower, and the screen is quiet between blinks. While a quiet runs
   on (after a change not 70 ms after another, or an animation's pause), the caller may
   grab and encode the screen ahead (``early``), to use if nothing at all is drawn
   after it. (The constants are :mod:`viewfinder.desktop.settle_waits`'.)
4. **What the session has taught** (:class:`SettleMemory`): when the screen changed
   after the tool had returned (the next action finds it), the wait after the actions
   that follow lasts at least until that late change's time (x1.25, plus ``quiet``;
   at most 0.55 s), for as long as one of the last 8 actions had such a change. Only a change drawn
   within 0.5 s after the wait ended, before the deadline, and timed by the X server
   teaches this; any other is reported, not learned (another actor's click, polling).
5. **A hard deadline**: ``timeout`` s (2) after the action began, whatever the
   measuring costs; a screen still changing then (a spinner, a video) is taken as it is
   and the report says it was still changing. Typing adds ``per_character`` s per
   character to the first-change wait and to the deadline: an app reads a long text
   for seconds before it draws any of it.

Only the action's changes count: those in the window it went to, in windows its app
opened since, or over the point where the pointer acted
(:mod:`viewfinder.desktop.attribution`). Other windows' changes (a clock, a banner,
another app's animation) neither end nor extend a wait, nor teach the hold; the report
counts them in ``elsewhere``.

After the wait the caller grabs the screen once; the whole action is bounded by the
deadline plus that one capture. Actions that only look (screenshot, zoom,
cursor_position) do not wait at all. :mod:`viewfinder.desktop.changes` says how changes
are noticed (the X server's DAMAGE extension, else polling).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from viewfinder.core.errors import ViewfinderError
from viewfinder.desktop.changes import (
    DamageChanges,
    PolledChanges,
    ScreenChanges,
    SettleUnavailableError,
)
from viewfinder.desktop.changes import open_changes as _open_changes
from viewfinder.desktop.settle_waits import (
    ASK_FRAMES,
    EARLY_QUIET_S,
    MAX_EARLY,
    RHYTHM_FRAME_S,
    InputHandled,
    call_early,
    first_change,
    paused,
    rhythm_quiet,
)

__all__ = [
    "DamageChanges",
    "PolledChanges",
    "ScreenChanges",
    "SettleMemory",
    "SettleOptions",
    "SettleOptionsError",
    "SettleReport",
    "SettleUnavailableError",
    "open_changes",
    "settle",
]

SettleMethod = Literal["auto", "damage", "poll"]
#: How many past actions a late change keeps the longer wait for.
MEMORY_ACTIONS = 8
_SECONDS = (
    "change_timeout",
    "quiet",
    "timeout",
    "patience",
    "poll_interval",
    "per_character",
    "grace",
)


class SettleOptionsError(ViewfinderError, ValueError):
    """Settle options that cannot work (a negative time, a quiet period past the timeout)."""


@dataclass(frozen=True)
class SettleOptions:
    """How long to wait after an action (see the module docstring), in seconds.

    ``change_timeout``: at most this long for the action's first visible change.
    ``quiet``: the screen must stay unchanged this long to count as settled.
    ``timeout``: the deadline, from the action's start; the wait never goes past it.
    ``patience``: while only small changes were seen, wait this long after the action
    for a bigger one (at most until the deadline). ``small_change``: a change of fewer
    pixels than this is small.
    ``per_character``: added to the first-change wait and the deadline per character
    typed. ``adapt``: learn from late changes (:class:`SettleMemory`). ``method``:
    ``damage`` (the X server reports repaints), ``poll`` (grab and compare every
    ``poll_interval``) or ``auto`` (damage where the server has it). ``grace``: once the
    app has answered the ping behind the action, a first change must come within this
    long, or the action changed nothing.
    """

    change_timeout: float = 0.5
    quiet: float = 0.05
    timeout: float = 2.0
    patience: float = 0.5
    small_change: int = 2000
    per_character: float = 0.002
    adapt: bool = True
    method: SettleMethod = "auto"
    poll_interval: float = 0.01
    grace: float = 0.05

    def __post_init__(self) -> None:
        for name in _SECONDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise SettleOptionsError(f"{name} must be a number of seconds >= 0, got {value!r}")
        if self.poll_interval <= 0:
            raise SettleOptionsError("poll_interval must be more than 0 seconds")
        if max(self.quiet, self.change_timeout) > self.timeout:
            raise SettleOptionsError(
                f"quiet ({self.quiet} s) and change_timeout ({self.change_timeout} s) must not "
                f"exceed timeout ({self.timeout} s), the deadline of the whole wait"
            )
        small = self.small_change
        if isinstance(small, bool) or not isinstance(small, int) or small < 0:
            raise SettleOptionsError(f"small_change must be a number of pixels >= 0, got {small!r}")
        if self.method not in ("auto", "damage", "poll"):
            raise SettleOptionsError(f"method must be auto, damage or poll, got {self.method!r}")


class SettleReport(BaseModel):
    """What one wait did.

    ``waited_s``: from the action's start to the end of the wait. ``changed``: the
    screen changed. ``settled``: it then stayed quiet; False when the deadline came
    while it still changed. ``changes``: change notices seen (repaints close together
    merge into one). ``small``: every change was small, and the wait went on for a
    bigger one until ``patience``. ``held_s``: the least wait the session's late changes
    asked for. ``deadline_s``: the deadline, from the action's start.
    """

    model_config = ConfigDict(frozen=True)

    waited_s: float
    changed: bool
    settled: bool
    changes: int
    method: str
    small: bool = False
    held_s: float = 0.0
    deadline_s: float = 0.0
    #: when the app, busy, handled the action (seconds from the action's start); None
    #: when it had handled it within the wait for the first change, or was not asked
    busy_s: float | None = None
    #: False when the app was asked and had not handled the action by the deadline
    handled: bool = True
    #: repaints in other apps' windows during the wait, not counted as the action's
    elsewhere: int = 0
    #: the quiet the wait ended on, when an animation's rhythm made it longer than quiet
    quiet_s: float | None = None


class SettleMemory:
    """How late the session's apps finished drawing: late changes teach a longer wait.

    :meth:`record` once per action, with the seconds from the action's start to a change
    found after the tool had returned (None: none was found). :meth:`hold` is the wait
    the next action should at least have: the latest of the last :data:`MEMORY_ACTIONS`
    such times, x1.25, plus ``quiet``; at most the longer of ``patience`` and
    ``change_timeout`` plus ``quiet`` (0.55 s), never past the deadline.
    """

    def __init__(self, actions: int = MEMORY_ACTIONS) -> None:
        self._late: deque[float] = deque(maxlen=actions)

    def record(self, late_s: float | None) -> None:
        self._late.append(max(0.0, late_s or 0.0))

    def hold(self, options: SettleOptions) -> float:
        latest = max(self._late, default=0.0)
        if not latest or not options.adapt:
            return 0.0
        # Bounded by the wait any action may get for its first change: a change on the
        # screen by someone else, timed as if it were late, cannot grow it further.
        most = max(options.patience, options.change_timeout) + options.quiet
        return round(min(latest * 1.25 + options.quiet, most, options.timeout - options.quiet), 4)


def open_changes(
    display_name: str, grab: Callable[[], bytes | bytearray], options: SettleOptions
) -> ScreenChanges:
    """The change detection ``options.method`` asks for (``auto``: damage, else polling)."""
    return _open_changes(display_name, grab, options.method, options.poll_interval)


def settle(
    changes: ScreenChanges,
    options: SettleOptions,
    *,
    started: float | None = None,
    expect_change: bool = True,
    measure: Callable[[], int] | None = None,
    hold: float = 0.0,
    typed: int = 0,
    handled: InputHandled | None = None,
    recheck: Callable[[], InputHandled | None] | None = None,
    early: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SettleReport:
    """Wait until the screen has settled after an action (see the module docstring).

    Call ``changes.mark()`` before the action and this right after it. ``started``:
    ``clock()`` when the action began (default: now); the deadline counts from it.
    ``expect_change=False`` skips waiting for the first change (after a ``wait``).
    ``measure()``: after a change, how many pixels differ from the frame before the
    action (None: every change counts as big). ``hold``: the least wait
    (:meth:`SettleMemory.hold`). ``typed``: characters typed by the action (their wait
    grows, and a small change is enough). ``handled``: asks the app whether it has
    handled the action; once it has, a first change must come within ``grace`` (and the
    hold), else the action changed nothing. When nothing changed by the first-change
    wait and the app has not handled it (a busy app, a loaded machine: its effect cannot
    have been drawn yet), the wait goes on until it has, then ``change_timeout`` more
    for the change, all within the deadline. ``recheck()``: a new ping to that app, sent
    once an animation's next frame is overdue; the app must answer it and draw nothing
    for ``grace`` after its answer before the screen counts as settled (a loaded machine
    holds an app, and its next frame, for longer than any quiet period). ``early()``:
    called once the screen was quiet ``EARLY_QUIET_S`` after a change (not one of
    changes closer than ``RHYTHM_FRAME_S``), or an animation paused, while the quiet
    runs on (at most ``MAX_EARLY`` times a wait, never within ``EARLY_MARGIN_S`` of the
    deadline; :mod:`viewfinder.desktop.settle_waits`): the caller may grab and encode
    the screen then, and use that if nothing is drawn after. When only small changes
    came and ``patience`` is what ends the wait, the app is asked too (``recheck``,
    ``grace`` before patience ends): one a loaded machine held past patience answers
    late, and what it draws then (the effect its timer was due to draw) is waited for.
    """
    start = clock() if started is None else started
    extra = typed * options.per_character
    deadline = start + options.timeout + extra
    hold_until = start + min(hold, options.timeout)
    first_by = min(deadline, max(start + options.change_timeout + extra, hold_until))
    patience_until = start + options.patience
    waits_for_big = expect_change and measure is not None and not typed
    big = not waits_for_big
    seen = 0
    busy_at: float | None = None
    answered = True
    times: list[float] = []
    quiet = options.quiet
    interval = 0.0
    early_left = 0 if early is None else MAX_EARLY
    patience_asked = recheck is None

    def report(settled: bool) -> SettleReport:
        return SettleReport(
            waited_s=round(clock() - start, 4),
            changed=seen > 0,
            settled=settled,
            changes=seen,
            method=changes.method,
            small=seen > 0 and not big,
            held_s=round(max(0.0, hold_until - start), 4),
            deadline_s=round(deadline - start, 4),
            busy_s=None if busy_at is None else round(busy_at - start, 4),
            handled=answered,
            elsewhere=changes.damage.elsewhere,
            quiet_s=round(quiet, 4) if quiet > options.quiet else None,
        )

    if expect_change:
        if not first_change(changes, handled, first_by, options.grace, hold_until, clock):
            if handled is None or handled.answered():
                return report(settled=True)
            # The app has not handled the action yet: nothing it draws for it can be on
            # the screen. Wait until it has, then for its change as right after an action.
            answered = handled.wait(max(0.0, deadline - clock()))
            busy_at = clock()
            if not answered:
                return report(settled=True)
            first_by = min(deadline, busy_at + options.change_timeout + extra)
            if not changes.wait(max(0.0, first_by - clock())):
                return report(settled=True)
        seen = 1
    changed_at = clock()
    times.append(changed_at)
    fresh = seen > 0
    while True:
        if fresh and not big and changed_at < patience_until and clock() < deadline:
            assert measure is not None
            big = measure() >= options.small_change
        fresh = False
        now = clock()
        if now >= deadline:
            return report(settled=False)  # a change, and no wait since to see it was the last
        end = max(changed_at + quiet, hold_until, start if big else patience_until)
        if quiet > options.quiet and recheck is not None:
            # An animation: the app is asked once its next frame is due, and its answer
            # heard while the quiet lasts. Settled only when the app, running, drew
            # nothing more (a loaded machine holds an app, and its next frame, for
            # longer than any quiet period).
            ask_at = min(end, changed_at + max(options.quiet, ASK_FRAMES * interval))
            drawn = changes.wait(max(0.0, min(ask_at, deadline) - now))
            if not drawn and clock() < deadline:
                again = recheck()
                early_left = call_early(early, early_left, deadline, clock)
                drawn = paused(changes, again, end, deadline, options.grace, clock)
        else:
            drawn = False
            burst = len(times) > 1 and times[-1] - times[-2] < RHYTHM_FRAME_S
            if early_left and not burst and changed_at + EARLY_QUIET_S < min(end, deadline):
                # likely drawn whole: grabbed and encoded ahead while the quiet runs on
                drawn = changes.wait(max(0.0, changed_at + EARLY_QUIET_S - now))
                if not drawn:
                    early_left = call_early(early, early_left, deadline, clock)
            if not drawn and not big and not patience_asked and end == patience_until:
                # Only small changes, and patience ends the wait: is the app running? One
                # a loaded machine holds answers late, then draws what was due meanwhile.
                # Asked a grace before patience ends: an answer at once adds nothing.
                drawn = changes.wait(max(0.0, min(end - options.grace, deadline) - clock()))
                if not drawn and clock() < deadline:
                    assert recheck is not None
                    patience_asked = True
                    drawn = paused(changes, recheck(), end, deadline, options.grace, clock)
            if not drawn:
                drawn = changes.wait(max(0.0, min(end, deadline) - clock()))
        if drawn:
            seen += 1
            changed_at = clock()
            times.append(changed_at)
            quiet, interval = rhythm_quiet(times, options.quiet)
            fresh = True
            continue
        # Nothing was drawn since the last change, up to now: only a wait can tell.
        now = clock()
        if now >= end or now >= deadline:
            if not big and measure is not None and now < deadline:
                # a big change after patience (a spinner's result) is still the
                # action's: measured once here, so the report does not call it small
                big = measure() >= options.small_change
            return report(settled=now >= changed_at + quiet)
