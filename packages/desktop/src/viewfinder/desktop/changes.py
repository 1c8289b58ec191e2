"""Noticing that the screen changed, where and when, and how much a change moved pixels.

:class:`DamageChanges` has the X server report every repaint through its DAMAGE
extension: no CPU spent while nothing is drawn, and each notice comes with the rectangle
drawn and the server's time of drawing. :class:`PolledChanges` grabs the screen every
``poll_interval`` and compares the bytes, where DAMAGE is missing. Both keep a
:class:`Damage` (where and when things were drawn) since the last :meth:`mark
<ScreenChanges.mark>`, which :mod:`viewfinder.desktop.settle` reads.

A repaint says where something was drawn, not whether it looks different: Tk redraws a
whole text box to blink its caret. :func:`changed_pixels` counts the pixels that really
differ between two frames inside the drawn area, which is what tells a caret or a
pressed button from the effect an action was waiting for.
"""

from __future__ import annotations

import contextlib
import select
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from viewfinder.core.errors import DisplayGoneError, ViewfinderError

if TYPE_CHECKING:
    from PIL import Image

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (x1, y1 exclusive)
#: A drawn rectangle is kept with its time for the first this many notices of a Damage.
MAX_NOTICES = 512
#: Two pixels differ when a channel differs by more than this (anti-aliasing and
#: dithering noise below it is no change a model could read).
PIXEL_THRESHOLD = 24


class SettleUnavailableError(ViewfinderError):
    """The change detection asked for cannot run on this display."""


@dataclass
class Damage:
    """What was drawn since a mark: where in all, and each notice's time and box.

    Times are ``time.monotonic()`` values, None where unknown; a box None means unknown
    where (polling tells only that the screen changed). ``elsewhere`` counts the
    notices drawn in other apps' windows (:mod:`viewfinder.desktop.attribution`), which
    are kept nowhere else: they are not the action's.
    """

    drawn: Box | None = None
    anywhere: bool = False
    notices: list[tuple[float | None, Box | None]] = field(default_factory=list)
    elsewhere: int = 0

    def add(self, at: float | None, box: Box | None, *, ours: bool = True) -> None:
        if not ours:
            self.elsewhere += 1
            return
        if box is None:
            self.anywhere = True
        else:
            self.drawn = box if self.drawn is None else _union(self.drawn, box)
        if len(self.notices) < MAX_NOTICES:
            self.notices.append((at, box))

    @property
    def box(self) -> Box | None:
        """The bounding box of what was drawn; None: the whole screen may have changed."""
        return None if self.anywhere else self.drawn

    def __bool__(self) -> bool:
        return bool(self.notices)

    def first_within(self, box: Box | None) -> float | None:
        """When the first drawing that touched ``box`` (None: anything) was done."""
        for at, drawn in self.notices:
            if box is None or drawn is None or _overlap(box, drawn):
                return at
        return None


class ScreenChanges:
    """Tells when the screen changes. :meth:`mark` before an action, :meth:`wait` after.

    :attr:`damage` gathers what the waits since the last mark saw.
    """

    method = "none"

    def __init__(self) -> None:
        #: Counts the marks and waits that saw a change: equal values, no change between.
        self.generation = 0
        self.damage = Damage()

    def mark(self) -> Damage:
        """What was drawn since the last wait or mark (counted in :attr:`generation`);
        starts :attr:`damage` afresh."""
        raise NotImplementedError

    def wait(self, timeout: float) -> bool:
        """True as soon as the screen changes, False when ``timeout`` passes without."""
        raise NotImplementedError

    def aim(self, pointer: bool | None) -> None:
        """The action just done went to the window under the pointer (``pointer``) or to
        the focused one (None: to no window): from now until the next aim, only changes
        in its windows count (:mod:`viewfinder.desktop.attribution`). Polling cannot
        tell where a change was: every change counts."""

    def close(self) -> None:
        """Release what the watch holds (idempotent)."""


class DamageChanges(ScreenChanges):
    """Changes as the X server's DAMAGE extension reports them, on a connection of its own.

    One ``DamageReportDeltaRectangles`` object on the root window (every window's
    drawing is seen; :meth:`aim` says which of it counts): the server sends a notice for
    each rectangle drawn outside what the object already holds, and :meth:`wait` empties
    it after reading, so a burst of drawing costs a few events. Raises
    :class:`SettleUnavailableError` when the display has no DAMAGE extension.
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
        #: monotonic seconds minus server seconds, the least seen (the server's clock is
        #: read when it draws; the least difference is the one read with least delay).
        self._offset: float | None = None
        try:
            conn = XDisplay(display_name)
        except (DisplayError, OSError) as exc:
            raise SettleUnavailableError(f"cannot connect to {display_name}: {exc}") from exc
        if not conn.has_extension(damage.extname):
            conn.close()
            raise SettleUnavailableError(f"display {display_name} has no DAMAGE extension")
        conn.damage_query_version()
        self._damage = conn.screen().root.damage_create(damage.DamageReportDeltaRectangles)
        from viewfinder.desktop.attribution import ActionWindows

        self.windows = ActionWindows(conn)
        conn.sync()
        self._conn: Any = conn

    def aim(self, pointer: bool | None) -> None:
        with self._connection():
            self.windows.aim(pointer)

    def mark(self) -> Damage:
        with self._connection() as conn:
            # Read what is queued, then empty the object and make a round trip: every
            # notice sent before now is read, and drawing from now on sends new ones.
            since = Damage()
            self._drain(since)
            conn.damage_subtract(self._damage, self._none, self._none)
            conn.sync()
            self._drain(since)
            self.damage = Damage()
            return since

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._connection() as conn:
            while True:
                if self._drain(self.damage):
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    conn.sync()  # notices the server sent before now are read, not missed
                    return self._drain(self.damage)
                if conn.pending_events():
                    continue  # a round trip in _drain read more into Xlib's queue
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

    def _drain(self, into: Damage) -> bool:
        """Read the queued notices into ``into``; True when one was the action's."""
        conn = self._conn
        seen = drawn = False
        while conn.pending_events():
            event = conn.next_event()
            if getattr(event, "damage", None) != self._damage:
                if self.windows.is_structure(event):
                    self.windows.structure(event)
                continue
            drawn = True
            now = time.monotonic()
            offset = now - event.timestamp / 1000
            if self._offset is None or offset < self._offset or offset - self._offset > 60:
                self._offset = offset  # (> 60 s: the server's 32-bit clock wrapped)
            area = event.area
            box = (area.x, area.y, area.x + area.width, area.y + area.height)
            ours = self.windows.ours(box)
            seen = seen or ours
            into.add(event.timestamp / 1000 + self._offset, box, ours=ours)
        if drawn:
            self.generation += 1  # the screen differs, whoever drew: a new grab is due
            # Empty the object, so the next drawing sends new notices. The round trip
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
    (well under a millisecond at 1920x1080), the grab a few milliseconds. Where a change
    was drawn is not known (:attr:`Damage.box` is None), and a change found by
    :meth:`mark` has no time.
    """

    method = "poll"

    def __init__(self, grab: Callable[[], bytes | bytearray], interval: float = 0.01) -> None:
        super().__init__()
        self._grab = grab
        self.interval = interval
        self._last: bytes | bytearray | None = None

    def mark(self) -> Damage:
        frame = self._grab()
        since = Damage()
        if self._last is not None and frame != self._last:
            self.generation += 1
            since.add(None, None)
        self._last = frame
        self.damage = Damage()
        return since

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            frame = self._grab()
            if self._last is None or frame != self._last:
                self._last = frame
                self.generation += 1
                self.damage.add(time.monotonic(), None)
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(self.interval, remaining))


def open_changes(
    display_name: str, grab: Callable[[], bytes | bytearray], method: str, poll_interval: float
) -> ScreenChanges:
    """The change detection ``method`` asks for (``auto``: damage, else polling)."""
    if method == "poll":
        return PolledChanges(grab, poll_interval)
    try:
        return DamageChanges(display_name)
    except SettleUnavailableError:
        if method == "damage":
            raise
        return PolledChanges(grab, poll_interval)


def changed_pixels(before: Image.Image, after: Image.Image, box: Box | None = None) -> int:
    """How many pixels of ``box`` (None: all) differ visibly between two frames of a screen.

    A pixel differs when one of its channels moved by more than :data:`PIXEL_THRESHOLD`.
    About 2 ms for a 400x600 box, 11 ms for a whole 1920x1080 screen.
    """
    from PIL import ImageChops

    if box is not None:
        box = _clamp(box, after)
        if box is None:
            return 0
        before, after = before.crop(box), after.crop(box)
    difference = ImageChops.difference(before.convert("RGB"), after.convert("RGB"))
    # The largest channel difference per pixel, then one bin for "more than the threshold".
    red, green, blue = difference.split()
    largest = ImageChops.lighter(ImageChops.lighter(red, green), blue)
    return largest.point(_over_threshold).histogram()[255]


def changed_box(before: Image.Image, after: Image.Image, box: Box | None = None) -> Box | None:
    """The bounding box of the pixels that differ between two frames, within ``box``."""
    from PIL import ImageChops

    x0, y0 = 0, 0
    if box is not None:
        box = _clamp(box, after)
        if box is None:
            return None
        x0, y0 = box[0], box[1]
        before, after = before.crop(box), after.crop(box)
    found = ImageChops.difference(before.convert("RGB"), after.convert("RGB")).getbbox()
    if found is None:
        return None
    return (found[0] + x0, found[1] + y0, found[2] + x0, found[3] + y0)


def _over_threshold(value: int) -> int:
    return 255 if value > PIXEL_THRESHOLD else 0


def _clamp(box: Box, image: Image.Image) -> Box | None:
    x0, y0 = max(0, box[0]), max(0, box[1])
    x1, y1 = min(image.width, box[2]), min(image.height, box[3])
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def _union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
