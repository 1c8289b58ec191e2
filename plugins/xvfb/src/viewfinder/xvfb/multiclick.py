"""How far apart the clicks of a double or triple click go (docs/decisions.md, 38).

X stamps each input event with the server's time in whole milliseconds. Chromium
(``ui::MouseEvent::IsRepeatedClickEvent``) counts a press as the next click of a
multi-click only when its time differs from the press before: two presses in the same
millisecond are taken for one native event seen twice, so no ``dblclick`` comes and no
word is selected. Presses sent back to back mostly land in one millisecond. GTK and Tk
count them, but count by time too, and give up after their double-click time (GTK
400 ms, Tk and Chromium 500 ms).

Measured on Xvfb with each press and release synced, 20 of each: Chromium counted 2-6
double and 0-3 triple clicks with no pause, 17-20 and 16-17 with 0.5 ms, and every one
from 1 ms up; GTK 3 and Tk counted every one with no pause.
:data:`MULTI_CLICK_GAP_S` is 20 times the 1 ms Chromium needs and a twentieth of the
shortest double-click time.

The same counting joins separate actions: a click that lands where the click before it
did, within the double-click time, is taken for its second click, so two clicks on a
list row open it and a double-click after a double-click is a triple. Measured on Xvfb
with two single clicks: Tk joins them up to 500 ms apart and 5 px (4 px joined, 6 did
not), GTK up to 400 ms and 5 px. GTK counts a triple click further out: a press within
twice its double-click time of a double-click's first press (GDK's
``_gdk_event_button_generate``); a double-click 530 ms after a double-click was a triple
to it. :class:`PressSpacing` keeps each action's first press out of the multi-click
before it by waiting out what is left of those times, only when it would land that near
that soon.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from viewfinder.core.event import EventKind

#: How many clicks each click event makes.
CLICK_COUNTS = {
    EventKind.CLICK: 1,
    EventKind.DOUBLE_CLICK: 2,
    EventKind.TRIPLE_CLICK: 3,
    EventKind.RIGHT_CLICK: 1,
    EventKind.MIDDLE_CLICK: 1,
}

#: The pause between one click's release and the next click's press in a multi-click.
MULTI_CLICK_GAP_S = 0.02

#: The longest double-click time among the toolkits (Tk and Chromium 500 ms, GTK and Qt
#: 400 ms), with a margin for the server's whole-millisecond stamps.
DOUBLE_CLICK_TIME_S = 0.52
#: How long after a double-click's first press GTK still takes a press for its third
#: (twice its 400 ms double-click time), with the same margin.
TRIPLE_CLICK_TIME_S = 0.82
#: The farthest apart on either axis two presses join (Tk, GTK and Qt 5 px, Chromium
#: 4 px), with a margin.
DOUBLE_CLICK_DISTANCE_PX = 8


class PressSpacing:
    """Keeps the first press of an action from joining the multi-click of the press
    before it: remembers the last two presses (button, place, time) and says how long to
    wait.

    The time is taken after the press was synced, so it is no earlier than the server's
    stamp on it; waiting from it keeps the next press at least the double-click time
    after, in the server's time too. :meth:`of_display` gives every input of a process on
    one display the same memory (two tools on one screen, one after the other).
    """

    _displays: dict[str, PressSpacing] = {}
    _displays_lock = threading.Lock()

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        # the last two presses: (button code, x, y, when)
        self._presses: deque[tuple[int, int, int, float]] = deque(maxlen=2)

    @classmethod
    def of_display(cls, display_name: str) -> PressSpacing:
        """The memory of the last presses this process made on ``display_name``."""
        with cls._displays_lock:
            return cls._displays.setdefault(display_name, cls())

    def pressed(self, code: int, x: int, y: int) -> None:
        """Button ``code`` was just pressed at ``(x, y)``."""
        with self._lock:
            self._presses.append((code, x, y, self._clock()))

    def wait_before(self, code: int, where: Callable[[], tuple[int, int]]) -> float:
        """Seconds to wait before pressing ``code`` as a click of its own; ``where`` (asked
        only when a press of that button was recent) is the point it presses at."""
        with self._lock:
            presses = list(self._presses)
        now = self._clock()
        # what is left of the double-click time of the last press, and of the triple-click
        # time of the one before it when the two made a double-click
        spans = [(presses[-1], DOUBLE_CLICK_TIME_S)] if presses else []
        if len(presses) == 2 and presses[1][3] - presses[0][3] <= DOUBLE_CLICK_TIME_S:
            spans.append((presses[0], TRIPLE_CLICK_TIME_S))
        recent = [
            (x, y, when + span - now)
            for (pressed, x, y, when), span in spans
            if pressed == code and when + span > now
        ]
        if not recent:
            return 0.0
        at_x, at_y = where()
        return max(
            (
                left
                for x, y, left in recent
                if max(abs(at_x - x), abs(at_y - y)) <= DOUBLE_CLICK_DISTANCE_PX
            ),
            default=0.0,
        )
