"""X protocol connections through python-xlib, with X failures turned into viewfinder errors.

python-xlib raises its own families of errors (``DisplayError`` when a server cannot
be reached, ``ConnectionClosedError`` when it went away mid-request, ``XError``
subclasses for bad requests). Callers here speak in viewfinder's terms instead:
:class:`~viewfinder.core.DisplayGoneError` when the display is not there,
:class:`~viewfinder.core.WindowNotFoundError` for a window id that names nothing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import Xlib.display
import Xlib.error

from viewfinder.core.errors import DisplayGoneError

#: python-xlib failures that mean the server is unreachable or went away.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    Xlib.error.DisplayError,
    Xlib.error.ConnectionClosedError,
    ConnectionError,
    BrokenPipeError,
)


def gone_message(name: str, detail: object) -> str:
    return (
        f"X display {name} is not running or stopped answering ({detail}). Start one with "
        "`viewfinder display start` (or a Display()), and check `viewfinder display list`."
    )


def open_display(name: str) -> Xlib.display.Display:
    """Connect to X display ``name``; :class:`DisplayGoneError` when it does not answer."""
    try:
        return Xlib.display.Display(name)
    except CONNECTION_ERRORS as exc:
        raise DisplayGoneError(gone_message(name, exc)) from exc
    except OSError as exc:
        raise DisplayGoneError(gone_message(name, exc)) from exc


@contextlib.contextmanager
def x_errors(name: str) -> Iterator[None]:
    """Turn a lost connection inside the block into :class:`DisplayGoneError`."""
    try:
        yield
    except CONNECTION_ERRORS as exc:
        raise DisplayGoneError(gone_message(name, exc)) from exc
    except OSError as exc:  # the socket itself failed under python-xlib
        raise DisplayGoneError(gone_message(name, exc)) from exc


class ThreadConnections:
    """One X connection per thread to one display, all closed together.

    python-xlib serialises requests on a connection, and a reply read by one thread
    while another waits is easy to get wrong; a connection per thread keeps captures
    from several threads independent.
    """

    def __init__(self, name: str, on_open: Callable[[Xlib.display.Display], Any] | None = None):
        self.name = name
        self._local = threading.local()
        self._all: list[Xlib.display.Display] = []
        self._lock = threading.Lock()
        self._on_open = on_open

    def get(self) -> Xlib.display.Display:
        """This thread's connection, opened on first use."""
        conn: Xlib.display.Display | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = open_display(self.name)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
            if self._on_open is not None:
                self._on_open(conn)
        return conn

    def discard_current(self) -> None:
        """Forget this thread's connection (after it failed), so the next get() reconnects."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._local.conn = None
            with self._lock:
                if conn in self._all:
                    self._all.remove(conn)
            close_quietly(conn)

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            close_quietly(conn)
        self._local = threading.local()


def close_quietly(conn: Xlib.display.Display) -> None:
    # Closing the connection of a display that died raises; there is nothing to release.
    with contextlib.suppress(Exception):
        conn.close()
