"""The worker confines itself before it runs any code: limits, and a user of its own.

Resource limits (``setrlimit``) bound what one session can take: memory it writes
(``RLIMIT_DATA``: private writable mappings, so a memory bomb gets ``MemoryError``,
while address space a runtime only reserves, as V8 in Chromium reserves tens of GB, does
not count: an ``RLIMIT_AS`` of any useful size stops Chromium from starting), core files
(none), file size, and open files. A process count limit needs more thought, because the
server usually runs as root and the kernel never applies ``RLIMIT_NPROC`` to root. So
when the worker starts as root it switches to a user id of its own (leased by the
parent, one per live worker): ``RLIMIT_NPROC`` then counts exactly this session's
processes, so a fork loop stops at the limit; the code cannot signal the server or other
sessions (different user, no ``CAP_KILL``); and the parent can find and kill every
process the session left, even ones that left its process group, by their user id.

Python itself may live where only root can read it (here: under ``/root``). Then the
worker keeps exactly one capability, ``CAP_DAC_READ_SEARCH`` (read any file, write
only its own), so that imports made later by the code (tkinter, matplotlib, ...) still
work; in the server image the interpreter is world-readable and no capability is kept.

Standard library only: this runs before the code, at every worker start.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_KEEPCAPS = 8
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_RAISE = 2
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


class Limits:
    """What the parent asks the worker to apply (sizes in bytes; None: leave as is)."""

    def __init__(
        self,
        memory_bytes: int | None = None,
        max_processes: int | None = None,
        file_size_bytes: int | None = None,
        open_files: int | None = None,
        uid: int | None = None,
        keep_read_access: bool = False,
        isolation: dict[str, Any] | None = None,
    ) -> None:
        self.memory_bytes = memory_bytes
        self.max_processes = max_processes
        self.file_size_bytes = file_size_bytes
        self.open_files = open_files
        self.uid = uid
        self.keep_read_access = keep_read_access
        #: What isolates the worker (the report of
        #: :func:`viewfinder.codeenv.worker.isolation.command`); None: nothing.
        self.isolation = isolation

    @classmethod
    def from_header(cls, header: dict[str, Any]) -> Limits:
        return cls(
            memory_bytes=header.get("memory_bytes"),
            max_processes=header.get("max_processes"),
            file_size_bytes=header.get("file_size_bytes"),
            open_files=header.get("open_files"),
            uid=header.get("uid"),
            keep_read_access=bool(header.get("keep_read_access", False)),
            isolation=header.get("isolation"),
        )


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _set_limit(kind: int, value: int | None) -> None:
    if value is None:
        return
    _soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY and hard < value:
        value = hard  # a limit can only be lowered without privileges
    resource.setrlimit(kind, (value, value))


def _switch_user(libc: ctypes.CDLL, uid: int, keep_read_access: bool) -> None:
    kept = (1 << _CAP_DAC_READ_SEARCH) if keep_read_access else 0
    with open("/proc/sys/kernel/cap_last_cap") as file:
        last_cap = int(file.read())
    # Drop from the bounding set first (needs CAP_SETPCAP, which root still has), so no
    # later exec of a set-user-id program can give anything back.
    for cap in range(last_cap + 1):
        if not (kept >> cap) & 1:
            _check(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    _check(libc.prctl(_PR_SET_KEEPCAPS, 1 if kept else 0, 0, 0, 0), "keep capabilities")
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if kept:
        header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
        data = (_CapData * 2)()
        data[0].effective = data[0].permitted = data[0].inheritable = kept
        _check(libc.capset(ctypes.byref(header), data), "capset")
        # Ambient: programs the code starts (another python) can read the interpreter too.
        _check(
            libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_RAISE, _CAP_DAC_READ_SEARCH, 0, 0),
            "raise ambient capability",
        )
    # Changing user made the process non-dumpable, which hands /proc/self/fd to root;
    # the worker opens the framebuffer it was passed through /proc/self/fd/N.
    _check(libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "set dumpable")


def confine(limits: Limits) -> dict[str, Any]:
    """Apply ``limits`` to this process; return what was applied (for the ready message)."""
    libc = _libc()
    _set_limit(resource.RLIMIT_CORE, 0)  # a segfault must not write a core file
    _set_limit(resource.RLIMIT_FSIZE, limits.file_size_bytes)
    _set_limit(resource.RLIMIT_NOFILE, limits.open_files)
    if limits.file_size_bytes is not None:
        # Past the file size limit a write fails with EFBIG instead of killing the worker.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    switched = False
    isolated: dict[str, Any] | None = None
    keep_read_access = limits.keep_read_access
    if limits.isolation is not None:
        # started inside bubblewrap by the parent (see isolation.py): say what it did
        isolated = dict(limits.isolation)
        if isolated.get("interpreter_reachable"):
            keep_read_access = False  # the interpreter is reachable without privileges
    if limits.uid is not None and os.geteuid() == 0:
        _switch_user(libc, limits.uid, keep_read_access)
        switched = True
        # what the session writes, in /tmp as anywhere, is readable by it alone
        os.umask(0o077)
    if switched or os.geteuid() != 0:
        # Applied only once we are not root: root ignores it, and a non-root user's
        # count includes every process of that user (see the module docstring).
        _set_limit(resource.RLIMIT_NPROC, limits.max_processes if switched else None)
    _set_limit(resource.RLIMIT_DATA, limits.memory_bytes)
    # Set after the user switch, which clears it: the worker dies with the thread that
    # started it (the parent's dedicated spawner thread), so none outlives its server.
    _check(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent death signal")
    return {
        "uid": os.getuid(),
        "switched_user": switched,
        "kept_read_access": switched and keep_read_access,
        "isolation": isolated,
        "max_processes": limits.max_processes if switched else None,
        "memory_bytes": limits.memory_bytes,
    }
