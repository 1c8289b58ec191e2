"""One clean-up after killed owners at a time on a machine.

Servers, MCP servers, desktops and session actors each remove, as they start, what
killed ones left (:func:`viewfinder.xvfb.server.reap_abandoned` and the code env's
sweeps). :func:`reaping` makes those clean-ups take turns through one lock file, so two
that start together do not stop the same leftovers twice, and anything that must see
leftovers as a kill left them (a test of the clean-up) can hold the others off.

The wait is bounded: a clean-up that cannot get the lock in time is skipped, and the
holder, or the next start, does the work.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

#: How long a clean-up waits for another to finish before it is skipped.
REAP_WAIT_S = 20.0

_guard = threading.RLock()
_depth = 0


#: The machine's lock file: in ``/tmp`` itself, where X keeps its machine-wide files,
#: not in ``tempfile.gettempdir()``, which each process (or ``TMPDIR``) may set apart.
LOCK_PATH = Path("/tmp/.viewfinder-reap.lock")


@contextlib.contextmanager
def reaping(timeout: float = REAP_WAIT_S) -> Iterator[bool]:
    """Hold the machine's clean-up lock; yields whether it was got within ``timeout``
    seconds. Re-entrant in a process. Where the lock file cannot be opened (another
    user's), it yields True unlocked: such a process can only clean up its own."""
    global _depth
    deadline = time.monotonic() + timeout
    if not _guard.acquire(timeout=max(timeout, 0.0)):
        yield False
        return
    try:
        if _depth:
            _depth += 1
            try:
                yield True
            finally:
                _depth -= 1
            return
        fd = _open()
        if fd is None:
            yield True
            return
        try:
            if not _lock(fd, deadline):
                yield False
                return
            _depth = 1
            try:
                yield True
            finally:
                _depth = 0
        finally:
            os.close(fd)  # closing drops the lock
    finally:
        _guard.release()


def _open() -> int | None:
    # read-only is enough for flock; O_CREAT only when missing (opening another user's
    # file with O_CREAT in a sticky folder is refused where protected_regular is set)
    for flags in (os.O_RDONLY, os.O_RDONLY | os.O_CREAT):
        with contextlib.suppress(OSError):
            return os.open(LOCK_PATH, flags | os.O_CLOEXEC, 0o644)
    return None


def _lock(fd: int, deadline: float) -> bool:
    delay = 0.01
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(delay, max(deadline - time.monotonic(), 0.0)))
            delay = min(delay * 2, 0.1)
