"""Finding and killing every process a worker left, through ``/proc``.

A worker runs in its own session and process group, so ``killpg`` reaches it and the
children it did not move elsewhere. Code can leave the group (``setsid()``, a
double fork); when the worker runs under a user id of its own, those processes still
carry that user id, and :func:`kill_all` sweeps them by it. Killed processes cannot
fork any more (a pending SIGKILL makes ``fork`` fail), so a few sweeps empty even a
fork loop, which ``RLIMIT_NPROC`` keeps small in the first place.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessInfo:
    """What ``/proc/PID/stat`` and ``status`` say about one process."""

    pid: int
    state: str
    session: int
    uid: int


def _read_process(pid: int) -> ProcessInfo | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read().decode("utf-8", "replace")
        with open(f"/proc/{pid}/status", "rb") as file:
            status = file.read().decode("utf-8", "replace")
    except OSError:  # gone meanwhile
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its end.
    fields = stat[stat.rfind(")") + 2 :].split()
    uid = -1
    for line in status.splitlines():
        if line.startswith("Uid:"):
            uid = int(line.split()[1])  # the real user id
            break
    return ProcessInfo(pid=pid, state=fields[0], session=int(fields[3]), uid=uid)


def processes() -> list[ProcessInfo]:
    """Every process on the machine (that this process can see)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = _read_process(int(entry))
            if info is not None:
                found.append(info)
    return found


def living(*, uid: int | None = None, session: int | None = None) -> list[ProcessInfo]:
    """Processes of user ``uid`` or in session ``session`` that have not exited (no zombies)."""
    own = os.getpid()
    return [
        info
        for info in processes()
        if info.pid != own
        and info.state not in ("Z", "X")
        and (
            (uid is not None and info.uid == uid)
            or (session is not None and info.session == session)
        )
    ]


def kill_all(
    *,
    group: int | None = None,
    uid: int | None = None,
    session: int | None = None,
    timeout: float = 5.0,
) -> list[int]:
    """SIGKILL process group ``group``, then every process of ``uid`` / in ``session``.

    Repeats until none is left or ``timeout`` s passed; returns the pids still alive
    (empty on success).
    """
    if group is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while True:
        left = living(uid=uid, session=session) if uid is not None or session is not None else []
        if not left:
            return []
        for info in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(info.pid, signal.SIGKILL)
        if time.monotonic() >= deadline:
            return [info.pid for info in living(uid=uid, session=session)]
        # A killed process turns into a zombie at once, but only once the kernel has run
        # it; yield the CPU briefly instead of spinning on /proc.
        time.sleep(0.005)
