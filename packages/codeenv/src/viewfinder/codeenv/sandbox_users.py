"""User ids for workers: one per live worker, leased across every process on the machine.

When the environment runs as root, each worker switches to a user id of its own (see
:mod:`viewfinder.codeenv.worker.confinement` for why). A lease is a lock file
``<dir>/<uid>.lock`` held with ``flock`` for as long as the worker lives: the kernel
drops it if the holder dies, so two servers on one machine never hand out the same id,
and a crashed server leaves nothing to clean up. Ids with processes still running are
skipped. The ids need no entry in ``/etc/passwd``.

The folder is one for the whole machine (:func:`default_lock_dir`), never under the
process's ``TMPDIR``: two servers started with different temporary folders would
otherwise lease the same id, and each would kill the other's sessions when sweeping it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from pathlib import Path

from viewfinder.codeenv import process_tree, shared_tmp
from viewfinder.codeenv.errors import SandboxError

#: The first user id handed to workers, and how many there are.
DEFAULT_FIRST_UID = 61000
DEFAULT_UID_COUNT = 2000


#: Where leases are kept when the process can write there (root, which is when leases
#: are taken): ``/run`` is the machine's, cleared at boot, and no service's private /tmp.
RUN_LOCK_DIR = Path("/run/viewfinder-sandbox-uids")
#: Otherwise here: still one path for every process, whatever its ``TMPDIR``.
TMP_LOCK_DIR = Path("/tmp/viewfinder-sandbox-uids")


def default_lock_dir() -> Path:
    """The lease folder every process on the machine uses (see the module docstring)."""
    if os.access(RUN_LOCK_DIR.parent, os.W_OK):
        return RUN_LOCK_DIR
    return TMP_LOCK_DIR


class UidLease:
    """A user id held for one worker; :meth:`release` gives it back."""

    def __init__(self, uid: int, lock_fd: int) -> None:
        self.uid = uid
        self._fd: int | None = lock_fd

    def release(self) -> None:
        """Give the id back (idempotent). Kill its processes first."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor drops the flock

    def __repr__(self) -> str:
        return f"<UidLease {self.uid}>"


class SandboxUsers:
    """Hands out user ids from ``first .. first + count - 1``."""

    def __init__(
        self,
        first: int = DEFAULT_FIRST_UID,
        count: int = DEFAULT_UID_COUNT,
        lock_dir: Path | None = None,
    ) -> None:
        if first < 1000 or count < 1:
            raise ValueError(f"sandbox user ids must start at 1000 or above, got {first}")
        self.first, self.count = first, count
        self.lock_dir = lock_dir or default_lock_dir()
        self._lock = threading.Lock()
        self._next = 0

    def lease(self) -> UidLease:
        """A free user id; :class:`SandboxError` when all are taken."""
        self.lock_dir.mkdir(mode=0o700, exist_ok=True)
        with self._lock:
            busy = {info.uid for info in process_tree.processes()}
            for offset in range(self.count):
                index = (self._next + offset) % self.count
                uid = self.first + index
                if uid in busy:
                    continue
                fd = os.open(
                    self.lock_dir / f"{uid}.lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600
                )
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                self._next = index + 1
                return UidLease(uid, fd)
        raise SandboxError(
            f"all {self.count} sandbox user ids ({self.first}..{self.first + self.count - 1}) "
            "are in use; close sessions or configure a larger range"
        )

    def reap_abandoned(self) -> dict[int, int]:
        """Clean up after ids whose holder died (a SIGKILLed server): kill their
        processes (daemons the code started with ``setsid``) and remove their files in
        ``/tmp``, ``/dev/shm`` and ``/var/tmp`` (homes included). An id is abandoned when
        it has processes or files but nobody holds its lease. Returns, per id cleaned,
        how many processes were killed."""
        ids = range(self.first, self.first + self.count)
        candidates = {info.uid for info in process_tree.processes() if info.uid in ids}
        for folder in shared_tmp.SHARED_FOLDERS:
            with contextlib.suppress(OSError):
                for entry in os.scandir(folder):
                    with contextlib.suppress(OSError):
                        owner = entry.stat(follow_symlinks=False).st_uid
                        if owner in ids:
                            candidates.add(owner)
        if not candidates:
            return {}
        self.lock_dir.mkdir(mode=0o700, exist_ok=True)
        cleaned = {}
        with self._lock:
            for uid in sorted(candidates):
                fd = os.open(
                    self.lock_dir / f"{uid}.lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600
                )
                try:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue  # a live worker holds it
                    killed = len(process_tree.living(uid=uid))
                    process_tree.kill_all(uid=uid)
                    shared_tmp.remove_owned_by(uid)
                    cleaned[uid] = killed
                finally:
                    os.close(fd)
        return cleaned


_shared: SandboxUsers | None = None
_shared_lock = threading.Lock()


def shared_users() -> SandboxUsers:
    """The process-wide :class:`SandboxUsers` with the default range."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = SandboxUsers()
        return _shared
