"""Repaints on an X display, through the DAMAGE extension: the live frame follows them.

Polling the screen every interval pairs a quick follow-up action with a frame from
before the previous action's repaint, and costs a grab per tick on a still screen. The
server instead reports every change of the root window's contents (the windows on it
included) with its timestamp; :class:`DamageWatch` hands each one to the frame store,
which captures right after it and knows, for any action, whether the screen changed
between a capture and the action.

A ``DamageReportNonEmpty`` object reports once until it is emptied again; the watch
empties it (``DamageSubtract``) after each report, so a burst of drawing costs a few
events, not one per rectangle.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
from collections.abc import Callable

from Xlib import X
from Xlib.display import Display as XDisplay
from Xlib.error import ConnectionClosedError, DisplayError
from Xlib.ext import damage

from viewfinder.recorder.x11 import ServerClock

log = logging.getLogger(__name__)


class DamageWatch:
    """Calls ``on_damage(monotonic_instant)`` for every repaint on X display ``display``."""

    def __init__(self, display: str, on_damage: Callable[[float], None]) -> None:
        self.display = display
        self.on_damage = on_damage
        self._conn: XDisplay | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._synced = threading.Condition()
        self._sync_asked = 0
        self._sync_done = 0
        # a pipe wakes the thread for a sync or a stop, so it sleeps until there is work
        self._wake_read, self._wake_write = os.pipe()
        #: why the watch ended on its own (the display went away); None while it runs
        self.ended: str | None = None

    def start(self) -> bool:
        """Start watching; False (and nothing running) when the display has no DAMAGE."""
        try:
            conn = XDisplay(self.display)
        except (DisplayError, ConnectionClosedError, OSError) as exc:
            log.info("no damage watch on %s: %s", self.display, exc)
            return False
        if not conn.has_extension(damage.extname):
            conn.close()
            return False
        try:
            conn.damage_query_version()
            self.clock = ServerClock.measure(conn)
            self._damage = conn.screen().root.damage_create(damage.DamageReportNonEmpty)
            conn.sync()
        except Exception as exc:  # an old or odd server: fall back to polling
            log.info("no damage watch on %s: %s", self.display, exc)
            with contextlib.suppress(Exception):
                conn.close()
            return False
        self._conn = conn
        self._thread = threading.Thread(
            target=self._run, name=f"viewfinder-damage {self.display}", daemon=True
        )
        self._thread.start()
        return True

    def sync(self, timeout: float = 1.0) -> None:
        """Return once every repaint the server did before this call has been reported."""
        with self._synced:
            if self._thread is None or not self._thread.is_alive():
                return
            self._sync_asked += 1
            wanted = self._sync_asked
            os.write(self._wake_write, b"s")
            self._synced.wait_for(lambda: self._sync_done >= wanted, timeout)

    def stop(self) -> None:
        """Stop watching (idempotent)."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"q")
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _run(self) -> None:
        conn = self._conn
        assert conn is not None
        try:
            while not self._stopping.is_set():
                with self._synced:
                    asked = self._sync_asked
                if asked > self._sync_done:
                    conn.get_input_focus()  # a round trip: earlier events are now queued
                while conn.pending_events():
                    self._handle(conn, conn.next_event())
                if asked > self._sync_done:
                    with self._synced:
                        self._sync_done = asked
                        self._synced.notify_all()
                    continue
                ready, _, _ = select.select([conn.fileno(), self._wake_read], [], [])
                if self._wake_read in ready:
                    os.read(self._wake_read, 64)
        except Exception as exc:  # the display went away: the frame store polls on
            if not self._stopping.is_set():
                log.info("damage watch on %s ended: %s", self.display, exc)
                self.ended = str(exc) or type(exc).__name__
        finally:
            with self._synced:
                self._sync_done = self._sync_asked
                self._synced.notify_all()

    def _handle(self, conn: XDisplay, event: object) -> None:
        if getattr(event, "damage", None) != self._damage:
            return
        at = self.clock.at(int(getattr(event, "timestamp", 0)))
        conn.damage_subtract(self._damage, X.NONE, X.NONE)
        conn.flush()
        self.on_damage(at)
