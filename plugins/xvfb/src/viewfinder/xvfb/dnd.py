"""Has an app begun an X drag-and-drop since a button went down? XFixes says.

An app that starts a drag-and-drop (Chromium for a ``draggable`` element, GTK, Qt)
takes the ``XdndSelection`` selection and from then on follows the pointer in a loop
of its own: motions sent before that loop began are gone for it, and a release with no
motion inside it drops nothing (Chromium fired ``dragstart`` and never ``drop``). A
drag's motions go out in milliseconds, long before the page has answered the first of
them, so the release waits a little for such a start and, when one came, moves the
pointer again (off by a pixel and back) before releasing, so the loop sees where the
drop is.
"""

from __future__ import annotations

import select
import time
from collections.abc import Callable

from Xlib.ext import xfixes

from viewfinder.xvfb.connection import close_quietly, open_display

#: How long a release after motion with a button held waits for an app to begin a
#: drag-and-drop, when none has begun yet.
DND_START_WAIT_S = 0.15
#: The rest after each of the two motions that show a begun drag-and-drop the drop point.
DND_MOTION_REST_S = 0.03


class DragAndDropWatch:
    """Who takes ``XdndSelection`` on X display ``display_name``, over a connection of
    its own (XFixes selection events)."""

    def __init__(self, display_name: str) -> None:
        self._conn = open_display(display_name)
        self._conn.xfixes_query_version()
        selection = self._conn.intern_atom("XdndSelection")
        root = self._conn.screen().root
        mask = xfixes.XFixesSetSelectionOwnerNotifyMask
        self._conn.xfixes_select_selection_input(root, selection, mask)
        self._conn.sync()

    def arm(self) -> None:
        """Forget the drags begun before now (call it just before a press)."""
        self._conn.sync()
        self._taken()

    def begun(self, timeout: float) -> bool:
        """Whether an app took ``XdndSelection`` since :meth:`arm`, waiting up to
        ``timeout`` seconds for it."""
        deadline = time.monotonic() + timeout
        while True:
            self._conn.sync()  # the events of what the server did so far are in
            if self._taken():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([self._conn.fileno()], [], [], min(left, 0.01))

    def _taken(self) -> bool:
        taken = False
        while self._conn.pending_events():
            event = self._conn.next_event()
            if getattr(event, "owner", 0):
                taken = True
        return taken

    def close(self) -> None:
        close_quietly(self._conn)


class Drops:
    """What an :class:`~viewfinder.xvfb.input.XInput` needs to end a drag-and-drop
    where its drag ends: told of its presses, motions and releases."""

    def __init__(self, display_name: str) -> None:
        self.display_name = display_name
        self._watch: DragAndDropWatch | None = None
        self._watchable = True
        self._held = False
        self._at: tuple[int, int] | None = None  # the last motion with the button held

    def pressed(self) -> None:
        """A button goes down now (before the press is sent)."""
        if self._watch is None and self._watchable:
            try:
                self._watch = DragAndDropWatch(self.display_name)
            except Exception:  # a server without XFixes: drags go as they always did
                self._watchable = False
        if self._watch is not None:
            self._watch.arm()
        self._held, self._at = True, None

    def moved(self, x: int, y: int) -> None:
        if self._held:
            self._at = (x, y)

    def releasing(self, move: Callable[[int, int], None]) -> None:
        """The button goes up next: when the drag began a drag-and-drop, show its loop
        the drop point (``move`` sends a motion and syncs)."""
        at, self._held, self._at = self._at, False, None
        if at is None or self._watch is None or not self._watch.begun(DND_START_WAIT_S):
            return
        for point in ((at[0] + 1, at[1]), at):
            move(*point)
            time.sleep(DND_MOTION_REST_S)

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
