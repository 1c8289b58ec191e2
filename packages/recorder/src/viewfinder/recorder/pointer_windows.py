"""The application whose window took each pointer action, asked of the X server.

Every click, double click, right or middle click, scroll and the press point of every
drag on an X display is stored with ``window``: the name the window in front at the
point gives its application (``WM_CLASS``, ``"tk_form/Tk"``;
:func:`viewfinder.xvfb.top_window.application_at`). It needs no accessibility tree, so
a Tk app that exposes none is named too, and a replay of the step acts only when that
application's window is in front at the point again. Asked when the action begins
(the first press of a double click), over a connection of its own; a display that
cannot be asked names nothing, and the recording goes on.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any

log = logging.getLogger(__name__)


class PointerWindows:
    """Names the application in front at a point of X display ``display``."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._failed = False

    @classmethod
    def for_display(cls, display: str) -> PointerWindows | None:
        """Lookups on X display ``display``; None when it cannot be opened."""
        from viewfinder.xvfb.connection import open_display

        try:
            return cls(open_display(display))
        except Exception as exc:  # the display's own errors are the capture backend's
            log.warning("pointer actions on %s are recorded without their window: %s", display, exc)
            return None

    def at(self, x: int, y: int) -> str | None:
        """The application in front at (``x``, ``y``), or None."""
        from viewfinder.xvfb.top_window import application_at

        with self._lock:
            if self._failed or self._conn is None:
                return None
            try:
                return application_at(self._conn, x, y)
            except Exception as exc:  # the display went away: name nothing from now on
                log.warning("cannot ask which window is in front any more: %s", exc)
                self._failed = True
                return None

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            from viewfinder.xvfb.connection import close_quietly

            with contextlib.suppress(Exception):
                close_quietly(conn)
