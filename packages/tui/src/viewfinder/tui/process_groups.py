"""Process groups on Linux: signal one, see who is left in it, reap its orphans.

Each managed process leads its own process group (and session), so one signal reaches
every child it started. A child that outlives its parent is re-parented to the nearest
"subreaper"; in containers that is often a PID 1 that never reaps, so killed
grandchildren would stay zombies forever. The manager therefore makes this process a
subreaper (``PR_SET_CHILD_SUBREAPER``) and reaps the zombies of its own groups itself.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_PR_SET_CHILD_SUBREAPER = 36
_subreaper_lock = threading.Lock()
_subreaper = False


@dataclass(frozen=True, slots=True)
class ProcEntry:
    """What ``/proc/<pid>/stat`` says about one process."""

    pid: int
    ppid: int
    pgid: int
    state: str

    @property
    def zombie(self) -> bool:
        return self.state == "Z"


def processes() -> Iterator[ProcEntry]:
    """Every process ``/proc`` shows (nothing on systems without ``/proc``)."""
    proc = Path("/proc")
    try:
        names = os.listdir(proc)
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            stat = (proc / name / "stat").read_text()
        except OSError:
            continue  # it exited while we looked
        # The command name (field 2) may contain spaces and parentheses: split after it.
        fields = stat.rsplit(")", 1)[1].split()
        yield ProcEntry(pid=int(name), state=fields[0], ppid=int(fields[1]), pgid=int(fields[2]))


def group_members(pgid: int) -> list[ProcEntry]:
    """The processes in group ``pgid``, zombies included."""
    return [entry for entry in processes() if entry.pgid == pgid]


def signal_group(pgid: int, signum: signal.Signals) -> bool:
    """Send ``signum`` to every process of group ``pgid``; False when the group is gone."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member changed its user (setuid helper); the others got the signal.
        return True
    return True


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux); True when it worked."""
    global _subreaper
    with _subreaper_lock:
        if _subreaper:
            return True
        if not sys.platform.startswith("linux"):
            return False
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            result = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        except (OSError, AttributeError):
            return False
        if result != 0:
            log.warning("prctl(PR_SET_CHILD_SUBREAPER) failed: errno %d", ctypes.get_errno())
            return False
        _subreaper = True
        return True


def reap_orphans(pgids: Collection[int], exclude: Collection[int] = ()) -> list[int]:
    """Reap zombie children of this process that belong to one of ``pgids``.

    Group leaders (``exclude``) are left alone: asyncio waits for those itself and must
    get their exit status. Only orphans re-parented to us are reaped, never another
    library's children, which live in groups of their own. Returns the pids reaped.
    """
    me = os.getpid()
    reaped = []
    for entry in processes():
        if entry.ppid != me or not entry.zombie or entry.pgid not in pgids:
            continue
        if entry.pid in exclude:
            continue
        try:
            pid, _ = os.waitpid(entry.pid, os.WNOHANG)
        except ChildProcessError:
            continue
        if pid:
            reaped.append(pid)
    return reaped


def live_members(pgid: int) -> list[int]:
    """Pids of the group's members that are not zombies."""
    return [entry.pid for entry in group_members(pgid) if not entry.zombie]
