"""Has the focused app handled the keys sent so far? Ask it with a ``_NET_WM_PING``.

Typing a character the keyboard map lacks means mapping its keysym to a spare keycode.
An app turns a key event into a keysym with the map it holds when it handles the
event, and it fetches the map again as soon as it sees a change, possibly before it
handled the keys queued ahead of the change (Tk drains the X queue into its own and
looks keys up later). Change a keycode while keys typed with it wait in the app and
it reads them as the new character.

X cannot say what a client has handled, but EWMH's ping can: a ``_NET_WM_PING``
client message sent to the app's window after the keys is queued behind them, and
the app answers it (to the root window) when it gets to it, in order. Tk, GTK, Qt and
Chromium answer pings. :class:`AppPings` sends the pings and reads the answers over
a connection of its own.
"""

from __future__ import annotations

import random
import select
import time

import Xlib.error
from Xlib import X
from Xlib.protocol import event

from viewfinder.xvfb.connection import close_quietly, open_display

#: Longest wait for an app's answer to a ping (one that does not answer costs this
#: once; after that the typing falls back to short pauses).
PONG_TIMEOUT_S = 2.0


class AppPings:
    """Pings to the app that has the keyboard focus on X display ``display_name``."""

    def __init__(self, display_name: str) -> None:
        self.display_name = display_name
        self._conn = open_display(display_name)
        self._root = self._conn.screen().root
        # the answers go to the root window with the substructure masks
        self._root.change_attributes(event_mask=X.SubstructureNotifyMask)
        self._ping = self._conn.intern_atom("_NET_WM_PING")
        self._protocols = self._conn.intern_atom("WM_PROTOCOLS")
        self._conn.sync()
        self._sent = 0
        self._answered = 0
        self._windows: dict[int, int] = {}  # ping number -> the window it went to
        self._tag = random.getrandbits(31)  # tells our answers from other senders' ones

    def send(self, window: int | None = None) -> int | None:
        """Ping the app of ``window`` (default: the focused window); its number, or None
        when there is no such window."""
        self._drain()
        if window is None:
            focus = self._conn.get_input_focus().focus
        else:
            focus = self._conn.create_resource_object("window", window)
        if not hasattr(focus, "id") or focus.id == self._root.id:
            return None
        self._sent += 1
        self._windows[self._sent] = focus.id
        message = event.ClientMessage(
            window=focus,
            client_type=self._protocols,
            data=(32, [self._ping, self._sent, focus.id, self._tag, 0]),
        )
        focus.send_event(message, event_mask=0)
        self._conn.flush()
        return self._sent

    def wait(self, number: int, timeout: float = PONG_TIMEOUT_S, *, keep: bool = False) -> bool:
        """Wait until ping ``number`` (and so every one before) was answered, or its
        window is gone (its app closed: its keys wait nowhere); False when ``timeout``
        seconds passed first. ``keep``: the ping may be waited for again."""
        deadline = time.monotonic() + timeout
        window = self._windows.get(number) if keep else self._windows.pop(number, None)
        while True:
            self._drain()
            if self._answered >= number or (window is not None and self._gone(window)):
                self._windows.pop(number, None)
                return True
            # _gone's round trip may have read the answer off the socket into Xlib's
            # queue, where select() cannot see it: look there before waiting
            self._drain()
            if self._answered >= number:
                self._windows.pop(number, None)
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([self._conn.fileno()], [], [], left)

    def window_under_pointer(self) -> int | None:
        """The application window the pointer is over (the client window inside a
        window manager's frame, the one with ``WM_STATE``), or None over the bare root."""
        try:
            child = self._root.query_pointer().child
            if not child:
                return None
            state = self._conn.intern_atom("WM_STATE")
            candidates = [child]
            for _ in range(3):  # frame -> (decoration ->) client: a few levels at most
                for window in candidates:
                    if window.get_full_property(state, X.AnyPropertyType) is not None:
                        return int(window.id)
                candidates = [c for window in candidates for c in window.query_tree().children]
        except Xlib.error.XError:  # a window went away meanwhile
            return None
        return int(child.id)  # no window manager: the top-level window is the app's

    def close(self) -> None:
        close_quietly(self._conn)

    def _gone(self, window: int) -> bool:
        try:
            self._conn.create_resource_object("window", window).get_geometry()
        except (Xlib.error.BadDrawable, Xlib.error.BadWindow):
            return True
        return False

    def _drain(self) -> None:
        while self._conn.pending_events():
            received = self._conn.next_event()
            if (
                received.type == X.ClientMessage
                and received.client_type == self._protocols
                and received.data[1][0] == self._ping
                and received.data[1][3] == self._tag
            ):
                self._answered = max(self._answered, int(received.data[1][1]))
                for number in [n for n in self._windows if n <= self._answered]:
                    del self._windows[number]  # answered: nobody needs its window
