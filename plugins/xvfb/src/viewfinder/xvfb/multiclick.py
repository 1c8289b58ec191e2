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
"""

from __future__ import annotations

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
