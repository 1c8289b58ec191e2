"""A pool of warm displays, so a sandbox gets a running X server without waiting for one."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from Xlib import X
from Xlib.protocol import request

from viewfinder.core.errors import ViewfinderError
from viewfinder.xvfb import access, windows
from viewfinder.xvfb.connection import close_quietly, open_display
from viewfinder.xvfb.display import Display

log = logging.getLogger(__name__)

#: Selections a session's client may hold on the root window past its windows' end.
_SELECTIONS = ("PRIMARY", "SECONDARY", "CLIPBOARD")

#: Wait before trying again after Xvfb failed to start (a retry pause, not a readiness wait).
_RETRY_PAUSE_S = 1.0


class PoolClosedError(ViewfinderError):
    """The pool was closed; it hands out no more displays."""


class PoolExhaustedError(ViewfinderError, TimeoutError):
    """No warm display became free within the acquire timeout."""


@dataclass(frozen=True)
class PoolStats:
    """How the pool stands: ``warm`` are ready to hand out, ``in_use`` are handed out."""

    size: int
    warm: int
    in_use: int
    starting: int
    started: int
    replaced: int


class DisplayPool:
    """Keeps ``size`` displays started, hands them out and takes them back clean.

    >>> with DisplayPool(size=2) as pool:              # doctest: +SKIP
    ...     with pool.display() as display:
    ...         run_sandbox(env=display.env())

    A background thread refills the pool whenever it has fewer than ``size`` warm
    displays. :meth:`release` closes every X client that has a window on the display
    (so the next user gets an empty screen), puts back the server's state (root window
    properties, keyboard, pointer), access control on with the owner alone admitted,
    and the selections disowned, so the next user gets a display as fresh as a new one;
    a display that died or cannot be cleaned is stopped and replaced by a fresh one.
    """

    def __init__(
        self,
        size: int = 2,
        width: int = 1280,
        height: int = 800,
        depth: int = 24,
        *,
        dpi: int | None = None,
        extra_args: Sequence[str] = (),
        start_timeout: float = 20.0,
        clean_timeout: float = 5.0,
    ) -> None:
        if size < 1:
            raise ValueError(f"pool size must be at least 1, got {size}")
        self.size = size
        self._display_options = dict(
            width=width,
            height=height,
            depth=depth,
            dpi=dpi,
            extra_args=tuple(extra_args),
            start_timeout=start_timeout,
        )
        self.clean_timeout = clean_timeout
        self._cond = threading.Condition()
        self._warm: deque[Display] = deque()
        self._in_use: set[Display] = set()
        self._starting = 0
        self._started = 0
        self._replaced = 0
        self._closed = False
        self._last_error: BaseException | None = None
        self._filler = threading.Thread(
            target=self._fill, name="viewfinder-display-pool", daemon=True
        )
        self._filler.start()

    # -- handing out -----------------------------------------------------------------------

    def acquire(self, timeout: float | None = None) -> Display:
        """A running, empty display; waits up to ``timeout`` s (None: forever) for one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                if self._closed:
                    raise PoolClosedError("the display pool is closed")
                while self._warm:
                    display = self._warm.popleft()
                    if display.is_alive():
                        self._in_use.add(display)
                        self._cond.notify_all()  # the filler starts a replacement
                        return display
                    self._discard(display)
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    error = self._last_error
                    cause = f"; the last start failed: {error}" if error else ""
                    raise PoolExhaustedError(
                        f"no display became free within {timeout:g}s "
                        f"({len(self._in_use)} in use, pool size {self.size}){cause}"
                    )
                self._cond.wait(remaining)

    def release(self, display: Display) -> None:
        """Take ``display`` back: clean it for the next user, or stop and replace it.

        A clean display goes to the front of the warm ones (the next :meth:`acquire`
        gets it); if that makes more than ``size`` warm, the surplus is stopped.
        """
        with self._cond:
            if display not in self._in_use:
                raise ValueError(f"{display!r} was not acquired from this pool")
            self._in_use.discard(display)
            closed = self._closed
        surplus: list[Display] = []
        kept = False
        if not closed and self._clean(display):
            with self._cond:
                if not self._closed:
                    self._warm.appendleft(display)
                    kept = True
                    while len(self._warm) > self.size:
                        surplus.append(self._warm.pop())
                    self._cond.notify_all()
        if not kept:
            with self._cond:
                if not self._closed:
                    self._replaced += 1
                self._cond.notify_all()
            surplus.append(display)
        for extra in surplus:
            extra.stop()

    @contextlib.contextmanager
    def display(self, timeout: float | None = None) -> Iterator[Display]:
        """``with pool.display() as d:`` acquires a display and releases it afterwards."""
        display = self.acquire(timeout)
        try:
            yield display
        finally:
            self.release(display)

    def stats(self) -> PoolStats:
        with self._cond:
            return PoolStats(
                size=self.size,
                warm=len(self._warm),
                in_use=len(self._in_use),
                starting=self._starting,
                started=self._started,
                replaced=self._replaced,
            )

    def wait_warm(self, count: int | None = None, timeout: float | None = None) -> bool:
        """Wait until ``count`` (default: ``size``) displays are warm; False on timeout."""
        wanted = self.size if count is None else count
        with self._cond:
            return (
                self._cond.wait_for(lambda: len(self._warm) >= wanted or self._closed, timeout)
                and not self._closed
            )

    # -- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every display, warm or handed out, and the refill thread (idempotent)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._filler is not threading.current_thread():
            self._filler.join()
        with self._cond:
            displays = [*self._warm, *self._in_use]
            self._warm.clear()
            self._in_use.clear()
        for display in displays:
            display.stop()

    def __enter__(self) -> DisplayPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        stats = self.stats()
        return f"<DisplayPool size={stats.size} warm={stats.warm} in_use={stats.in_use}>"

    # -- internals -----------------------------------------------------------------------------

    def _fill(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(
                    lambda: self._closed or len(self._warm) + self._starting < self.size
                )
                if self._closed:
                    return
                self._starting += 1
            display = Display(**self._display_options)  # type: ignore[arg-type]
            try:
                display.start()
            except Exception as exc:  # keep the pool alive; acquire() reports the cause
                log.warning("display pool could not start Xvfb: %s", exc)
                with self._cond:
                    self._starting -= 1
                    self._last_error = exc
                    self._cond.wait(_RETRY_PAUSE_S)
                continue
            with self._cond:
                self._starting -= 1
                self._started += 1
                self._last_error = None
                closed = self._closed
                if not closed and len(self._warm) < self.size:
                    self._warm.append(display)
                    self._cond.notify_all()
                    continue
            # closed while it was starting, or a released display took its place meanwhile
            display.stop()
            if closed:
                return

    def _discard(self, display: Display) -> None:
        # Called with the condition held; stopping a dead display is quick.
        self._replaced += 1
        display.stop()

    def _clean(self, display: Display) -> bool:
        """Close every client window on ``display``; False when it is dead or stays dirty."""
        if not display.is_alive():
            return False
        display.close_input()  # gives back keycodes it remapped for typing
        try:
            conn = open_display(display.name)
        except ViewfinderError:
            return False
        try:
            left = windows.close_all_clients(conn, timeout=self.clean_timeout)
            display.restore_state()
            # what a session's code may have changed on the server itself: access
            # control (``xhost +``, users it let in) and the selections it holds
            display.admit(None)
            access.restrict_to_owner(display.name)
            _disown_selections(conn)
        except Exception as exc:  # any X failure means we cannot vouch for the display
            log.warning("could not clean display %s: %r", display.name, exc)
            return False
        finally:
            close_quietly(conn)
        if left:
            log.warning(
                "display %s kept windows %s after their clients were killed", display.name, left
            )
        return not left and display.is_alive()


def _disown_selections(conn: Any) -> None:
    """Leave no owner on the usual selections: a client without windows (one owning a
    selection on the root window) outlives the window clean-up."""
    for name in _SELECTIONS:
        atom = conn.intern_atom(name)
        if conn.get_selection_owner(atom) != X.NONE:
            request.SetSelectionOwner(
                display=conn.display, window=X.NONE, selection=atom, time=X.CurrentTime
            )
    conn.sync()
