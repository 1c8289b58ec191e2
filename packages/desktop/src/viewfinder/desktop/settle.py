"""Settle: take the screenshot after an action once the screen has stopped changing.

A fixed sleep after every action (Anthropic's reference implementation sleeps 2 s) is
both slow and unsafe: slow when the effect shows at once, unsafe when it takes longer.
:func:`settle` instead waits for what the action does:

1. **The effect.** After the action it waits for the first change of the screen, at
   most ``change_timeout`` seconds. An action that changes nothing (a click on an empty
   spot) costs exactly that; an effect that starts later than that is missed. Skipped
   for ``wait`` (its own duration was the wait).
2. **Quiet.** Then it waits until the screen has not changed for ``quiet`` seconds, so
   an effect drawn in several steps (a repaint, a list filling in) is seen whole.
3. **Bound.** Never longer than ``timeout`` seconds in all: a screen that never stops
   changing (an animation, a blinking caret) is captured as it is then.

Actions that only look (screenshot, zoom, cursor_position) do not wait at all.

The quiet period is not idle time: after each change ComputerTool grabs, scales and
encodes the screen right away (``on_change``), and when the quiet period then passes
without another change, that frame is the answer. Drawing that starts meanwhile is a
change like any other and starts the quiet period again, so the frame returned is
always one taken after the last change seen. A click whose effect shows at once is
answered about ``quiet`` seconds after it.

A *change* is, by default, a repaint the X server reports through its DAMAGE extension
(:class:`DamageChanges`): the server tells us the moment anything is drawn, so waiting
costs no CPU and notices a change within a millisecond or two. A repaint that leaves the
pixels as they were counts too. Where DAMAGE is missing, the screen is grabbed every
``poll_interval`` seconds and compared byte for byte with the last grab
(:class:`PolledChanges`). ``benchmarks/desktop.py`` measures both.
"""

from __future__ import annotations

import contextlib
import select
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from viewfinder.core.errors import DisplayGoneError, ViewfinderError

SettleMethod = Literal["auto", "damage", "poll"]


class SettleOptionsError(ViewfinderError, ValueError):
    """Settle options that cannot work (a negative time, a quiet period past the timeout)."""


class SettleUnavailableError(ViewfinderError):
    """The change detection asked for cannot run on this display."""


@dataclass(frozen=True)
class SettleOptions:
    """How long to wait after an action (see the module docstring), in seconds.

    ``change_timeout``: at most this long for the action's first visible change (the
    default covers a widget that repaints 150 ms after a click on a busy machine).
    ``quiet``: the screen must stay unchanged this long to count as settled.
    ``timeout``: the whole wait never takes longer. ``method``: ``damage`` (the X
    server reports repaints), ``poll`` (grab and compare every ``poll_interval``) or
    ``auto`` (damage where the server has it).
    """

    change_timeout: float = 0.5
    quiet: float = 0.05
    timeout: float = 2.0
    method: SettleMethod = "auto"
    poll_interval: float = 0.01

    def __post_init__(self) -> None:
        for name in ("change_timeout", "quiet", "timeout", "poll_interval"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise SettleOptionsError(f"{name} must be a number of seconds >= 0, got {value!r}")
        if self.poll_interval <= 0:
            raise SettleOptionsError("poll_interval must be more than 0 seconds")
        if self.quiet > self.timeout or self.change_timeout > self.timeout:
            raise SettleOptionsError(
                f"quiet ({self.quiet} s) and change_timeout ({self.change_timeout} s) must not "
                f"exceed timeout ({self.timeout} s), which bounds the whole wait"
            )
        if self.method not in ("auto", "damage", "poll"):
            raise SettleOptionsError(f"method must be auto, damage or poll, got {self.method!r}")


class SettleReport(BaseModel):
    """What one wait did: how long it took, whether the screen changed and came to rest.

    ``settled`` is False when ``timeout`` ended the wait while the screen still changed.
    ``changes`` counts the change notices seen (repaints close together merge into one).
    """

    model_config = ConfigDict(frozen=True)

    waited_s: float
    changed: bool
    settled: bool
    changes: int
    method: str


class ScreenChanges:
    """Tells when the screen changes. :meth:`mark` before an action, :meth:`wait` after."""

    method = "none"

    def __init__(self) -> None:
        #: Counts the marks and waits that saw a change: equal values, no change between.
        self.generation = 0

    def mark(self) -> int:
        """Forget changes so far (counting them in :attr:`generation`); returns it."""
        raise NotImplementedError

    def wait(self, timeout: float) -> bool:
        """True as soon as the screen changes, False when ``timeout`` passes without."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the watch holds (idempotent)."""


class DamageChanges(ScreenChanges):
    """Changes as the X server's DAMAGE extension reports them, on a connection of its own.

    One ``DamageReportNonEmpty`` object on the root window (every window's drawing
    counts): the server sends one notice when something is drawn, and another only after
    :meth:`wait` has emptied the object again, so a burst of drawing costs a few events.
    Raises :class:`SettleUnavailableError` when the display has no DAMAGE extension.
    """

    method = "damage"

    def __init__(self, display_name: str) -> None:
        super().__init__()
        from Xlib import X
        from Xlib.display import Display as XDisplay
        from Xlib.error import ConnectionClosedError, DisplayError
        from Xlib.ext import damage

        self.display_name = display_name
        self._gone: tuple[type[BaseException], ...] = (ConnectionClosedError, DisplayError, OSError)
        self._none = X.NONE
        try:
            conn = XDisplay(display_name)
        except (DisplayError, OSError) as exc:
            raise SettleUnavailableError(f"cannot connect to {display_name}: {exc}") from exc
        if not conn.has_extension(damage.extname):
            conn.close()
            raise SettleUnavailableError(f"display {display_name} has no DAMAGE extension")
        conn.damage_query_version()
        self._damage = conn.screen().root.damage_create(damage.DamageReportNonEmpty)
        conn.sync()
        self._conn: Any = conn

    def mark(self) -> int:
        with self._connection() as conn:
            # A round trip after emptying the object: every notice sent before is queued.
            conn.damage_subtract(self._damage, self._none, self._none)
            conn.sync()
            if self._drain():
                self.generation += 1
            return self.generation

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._connection() as conn:
            while True:
                if self._drain():
                    self.generation += 1
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    conn.sync()  # notices the server sent before now are read, not missed
                    if self._drain():
                        self.generation += 1
                        return True
                    return False
                select.select([conn.fileno()], [], [], remaining)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        if self._conn is None:
            raise DisplayGoneError(f"the change watch on {self.display_name} is closed")
        try:
            yield self._conn
        except self._gone as exc:
            raise DisplayGoneError(
                f"display {self.display_name} went away while waiting for it to settle ({exc})"
            ) from exc

    def _drain(self) -> bool:
        conn = self._conn
        seen = False
        while conn.pending_events():
            event = conn.next_event()
            if getattr(event, "damage", None) == self._damage:
                seen = True
        if seen:
            # Empty the object, so the next drawing sends a new notice. The round trip
            # makes sure the server has emptied it before anything we ask next (a grab on
            # another connection): drawing after the grab cannot be emptied unnoticed.
            conn.damage_subtract(self._damage, self._none, self._none)
            conn.sync()
        return seen

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # the display may be gone already
                conn.close()


class PolledChanges(ScreenChanges):
    """Changes found by grabbing the screen every ``interval`` s and comparing the bytes.

    ``grab`` returns the screen's raw pixels; a comparison of two frames is a ``memcmp``
    (well under a millisecond at 1920x1080), the grab a few milliseconds.
    """

    method = "poll"

    def __init__(self, grab: Callable[[], bytes | bytearray], interval: float = 0.01) -> None:
        super().__init__()
        self._grab = grab
        self.interval = interval
        self._last: bytes | bytearray | None = None

    def mark(self) -> int:
        frame = self._grab()
        if self._last is not None and frame != self._last:
            self.generation += 1
        self._last = frame
        return self.generation

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            frame = self._grab()
            if self._last is None or frame != self._last:
                self._last = frame
                self.generation += 1
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(self.interval, remaining))


def open_changes(
    display_name: str, grab: Callable[[], bytes | bytearray], options: SettleOptions
) -> ScreenChanges:
    """The change detection ``options.method`` asks for (``auto``: damage, else polling)."""
    if options.method == "poll":
        return PolledChanges(grab, options.poll_interval)
    try:
        return DamageChanges(display_name)
    except SettleUnavailableError:
        if options.method == "damage":
            raise
        return PolledChanges(grab, options.poll_interval)


def settle(
    changes: ScreenChanges,
    options: SettleOptions,
    *,
    expect_change: bool = True,
    on_change: Callable[[], object] | None = None,
) -> SettleReport:
    """Wait until the screen has settled after an action (see the module docstring).

    Call ``changes.mark()`` before the action and this right after it.
    ``expect_change=False`` skips waiting for the first change (after a ``wait``).

    ``on_change`` is called after every change seen, inside the quiet period that
    follows it (the quiet clock runs meanwhile): ComputerTool captures, scales and
    encodes the screen there, and when no change follows (``settled`` and ``changed``)
    the result of its last call shows the settled screen. Any drawing that starts
    while it runs is a change like any other, so the quiet period still holds.
    """
    start = time.monotonic()
    deadline = start + options.timeout
    seen = 0

    def report(settled: bool) -> SettleReport:
        return SettleReport(
            waited_s=round(time.monotonic() - start, 4),
            changed=seen > 0,
            settled=settled,
            changes=seen,
            method=changes.method,
        )

    if expect_change:
        if not changes.wait(options.change_timeout):
            return report(settled=True)
        seen = 1
    changed_at = time.monotonic()
    while True:
        if seen and on_change is not None:
            on_change()
        now = time.monotonic()
        needed = options.quiet - (now - changed_at)
        remaining = deadline - now
        if remaining <= 0 < needed:
            return report(settled=False)  # still changing at the deadline
        if not changes.wait(max(0.0, min(needed, remaining))):
            return report(settled=needed <= remaining)
        seen += 1
        changed_at = time.monotonic()
