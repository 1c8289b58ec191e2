"""The pointer of a ComputerTool's display: where it is, and drags along a path."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

from viewfinder.core import DisplayGoneError

if TYPE_CHECKING:
    from viewfinder.xvfb.input import XInput

#: A drag along a path moves at most this many screen pixels between two motion events.
DRAG_STEP_PX = 25
#: ... and at each point waits for the app under the pointer to have handled the motions
#: (XInput.await_pointer_app), or rests this long where it cannot be asked: toolkits
#: merge motion events that queue up (Tk keeps only the last), and a corner of the path
#: must not be merged away.
PATH_DWELL_S = 0.02


class PointerQuery:
    """Asks X display ``display_name`` where its pointer is (one connection, kept)."""

    def __init__(self, display_name: str) -> None:
        self.display_name = display_name
        self._x: Any = None

    def where(self) -> tuple[int, int]:
        """The pointer's screen point; :class:`DisplayGoneError` when the display does
        not answer (the next call connects afresh)."""
        from Xlib.display import Display as XDisplay
        from Xlib.error import ConnectionClosedError, DisplayError

        try:
            if self._x is None:
                self._x = XDisplay(self.display_name)
            reply = self._x.screen().root.query_pointer()
        except (ConnectionClosedError, DisplayError, OSError) as exc:
            self._x = None
            raise DisplayGoneError(
                f"cannot ask display {self.display_name} where the pointer is ({exc})"
            ) from exc
        return (int(reply.root_x), int(reply.root_y))

    def close(self) -> None:
        if self._x is not None:
            self._x.close()
            self._x = None


def drag_along(controls: XInput, path: list[tuple[int, int]]) -> None:
    """OpenAI's drag: press at the path's first point, move through every point with
    the button held, release at the last."""
    controls.mouse_down("left", *path[0])
    for (x0, y0), (x1, y1) in itertools.pairwise(path):
        steps = max(1, min(10, math.ceil(math.dist((x0, y0), (x1, y1)) / DRAG_STEP_PX)))
        for step in range(1, steps + 1):
            controls.move(x0 + (x1 - x0) * step // steps, y0 + (y1 - y0) * step // steps)
        controls.await_pointer_app(PATH_DWELL_S)
    controls.mouse_up("left", *path[-1])
