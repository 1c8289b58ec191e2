"""The frames of a ComputerTool: grabbing the screen, waiting for it to settle, and
noticing what changed after the model's last look.

:class:`ScreenFrames` keeps the last frame grabbed (reused while nothing is drawn), the
frame the model last got, and the session's :class:`~viewfinder.desktop.settle.SettleMemory`.
Before each action it asks the change watch what was drawn since: a visible change
after the tool returned (the app drew its effect late) is a :class:`LateChange`, which
the action's result reports, and which makes the following waits longer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from viewfinder.core.screenshot import utc_now
from viewfinder.desktop.changes import changed_box, changed_pixels
from viewfinder.desktop.settle import (
    SettleMemory,
    SettleOptions,
    SettleReport,
    open_changes,
    settle,
)
from viewfinder.desktop.settle_waits import InputHandled

if TYPE_CHECKING:
    from PIL import Image

    from viewfinder.xvfb import XvfbBackend
    from viewfinder.xvfb.grab import ScreenGrab


#: A late change teaches a longer wait only when it came this soon after the wait ended.
LEARN_WINDOW_S = 0.5


@dataclass(frozen=True)
class LateChange:
    """The screen changed visibly after the last screenshot the model got.

    ``after_s``: seconds from the start of the action that screenshot answered to the
    first drawing of the change (None: unknown, with polling). ``pixels``: how many
    pixels differ from that screenshot.
    """

    after_s: float | None
    pixels: int

    def describe(self) -> str:
        when = f", {self.after_s:.2f} s after the last action began" if self.after_s else ""
        return (
            f"the screen changed after the last screenshot{when} ({self.pixels} pixels); "
            "this action was done on the changed screen, shown in the first image"
        )


@dataclass(frozen=True)
class Before:
    """The screen just before an action, and what changed since the model last saw it."""

    frame: Image.Image
    captured_at: datetime
    late: LateChange | None


class ScreenFrames:
    """Grabs, change watch and settle memory of one ComputerTool on ``backend``."""

    def __init__(self, backend: XvfbBackend, options: SettleOptions) -> None:
        self._backend = backend
        self.options = options
        self.display_name = backend.display_name
        self._raw: ScreenGrab | None = None
        self.memory = SettleMemory()
        #: The last frame grabbed, when, and the change watch's generation then.
        self._last: tuple[Image.Image, datetime, int] | None = None
        #: The frame the model last got, when the action it answered began, and when its
        #: wait ended (monotonic; None: no action, a look).
        self._shown: tuple[Image.Image, float | None, float] | None = None
        self.changes = open_changes(self.display_name, self._raw_pixels, options)

    @property
    def method(self) -> str:
        return self.changes.method

    def grab(self) -> tuple[Image.Image, datetime]:
        """The screen now."""
        at = utc_now()
        frame = self._backend.grab()
        self._last = (frame, at, self.changes.generation)
        return frame, at

    def current(self) -> tuple[Image.Image, datetime]:
        """The screen now: the last frame grabbed when the change watch saw nothing drawn
        since (it reads every notice the server sent before its wait or mark ended), else
        a new grab."""
        last = self._last
        if last is not None and last[2] == self.changes.generation:
            return last[0], last[1]
        return self.grab()

    def before_action(self) -> Before:
        """The screen now (the last frame when nothing was drawn since), and whether it
        changed visibly after the model's last screenshot (recorded in the memory)."""
        damage = self.changes.mark()
        frame, at = self.current()
        late = None
        shown = self._shown
        if shown is not None and damage:
            pixels = changed_pixels(shown[0], frame, damage.box)
            if pixels >= self.options.small_change:
                drawn = damage.first_within(changed_box(shown[0], frame, damage.box))
                after_s = None if drawn is None or shown[1] is None else drawn - shown[1]
                late = LateChange(None if after_s is None else round(after_s, 3), pixels)
        if shown is not None and shown[1] is not None:
            self.memory.record(self._late_seconds(late, shown[2] - shown[1]))
        return Before(frame, at, late)

    def _late_seconds(self, late: LateChange | None, waited_s: float) -> float | None:
        """What a late change teaches: its time after the action, when it is known and
        came within :data:`LEARN_WINDOW_S` after the wait ended.

        Polling cannot tell when a change came, and a time before the wait ended is a
        stale server clock: those are reported, not learned. A change later than the
        window is more likely someone else's doing than the app's (and one past the
        deadline could not have been waited for).
        """
        if late is None or late.after_s is None:
            return None
        after_wait = late.after_s - waited_s
        if not 0 <= after_wait <= LEARN_WINDOW_S or late.after_s >= self.options.timeout:
            return None
        return late.after_s

    def settle_after(
        self,
        before: Before,
        started: float,
        *,
        expect_change: bool,
        typed: int = 0,
        handled: InputHandled | None = None,
        pointer: bool | None = None,
        recheck: Callable[[], InputHandled | None] | None = None,
        prepare: Callable[[Image.Image, datetime], object] | None = None,
    ) -> tuple[SettleReport, Image.Image, datetime]:
        """Wait until the screen settled after an action begun at ``started`` (monotonic),
        then grab it once: the report and the frame. ``handled``: see :func:`settle`.
        ``pointer``: the action went to the window under the pointer (True) or to the
        focused one (False); only changes there count (None: any change counts).
        ``recheck``: see :func:`settle`. A frame grabbed during the wait is the one
        returned when nothing at all was drawn after it; ``prepare(frame, captured_at)``
        is called on the screen as it is once it was quiet a moment (``early`` of
        :func:`settle`), so its encoding is done when the wait ends."""
        self.changes.aim(pointer)

        def measure() -> int:
            frame, _ = self.current()
            return changed_pixels(before.frame, frame, self.changes.damage.box)

        def early() -> None:
            frame, at = self.current()
            if prepare is not None:
                prepare(frame, at)

        report = settle(
            self.changes,
            self.options,
            started=started,
            expect_change=expect_change,
            measure=measure,
            hold=self.memory.hold(self.options) if expect_change else 0.0,
            typed=typed,
            handled=handled,
            recheck=recheck,
            early=early,
        )
        frame, at = self.current()
        self._shown = (frame, started, started + report.waited_s)
        return report, frame, at

    def shown(self, frame: Image.Image) -> None:
        """The model got ``frame`` without an action (a screenshot, a zoom)."""
        self._shown = (frame, None, 0.0)

    def _raw_pixels(self) -> bytearray:
        """The screen's raw pixels, for change detection by polling (no image built)."""
        if self._raw is None:
            from viewfinder.xvfb.grab import ScreenGrab

            self._raw = ScreenGrab(self.display_name)
        return self._raw.raw()[0]

    def close(self) -> None:
        self.changes.close()
        if self._raw is not None:
            self._raw.close()
        self._last = self._shown = None
