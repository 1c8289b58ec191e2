"""The places a session may write, on one size-capped tmpfs of its own.

A session writes to its home (also its ``TMPDIR``) and to ``/tmp``, ``/var/tmp`` and
``/dev/shm``. All four live in one folder of the server's (:class:`SessionSpace`), on
which, when the server runs as root, a tmpfs of ``size_bytes`` is mounted: so the
session as a whole can write that much and no more (``ENOSPC`` past it), nothing it
writes reaches the machine's disk, and nothing is left once the space is removed (the
tmpfs is unmounted). The sandbox (:mod:`viewfinder.codeenv.worker.isolation`) binds the
three temporary folders over the machine's and the home at its own path.

Layout: ``<root>/home`` (the home), ``<root>/tmp``, ``<root>/var-tmp``, ``<root>/shm``.
The root may be entered but not listed by others (0711); each place in it belongs to the
session's user alone (0700), so no other user, another session included, can look in.

A server killed before it removed its spaces leaves them mounted; the next server to
start (:func:`sweep_abandoned`) and the next space made on the machine unmount and
remove those whose server is gone (their folder names carry its pid).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import tempfile
from pathlib import Path

#: Where each of the session's temporary folders is, in the sandbox and in the space.
TOPS = {"/tmp": "tmp", "/var/tmp": "var-tmp", "/dev/shm": "shm"}
PREFIX = "viewfinder-session-"
_NAME = re.compile(rf"{PREFIX}(\d+)-\w+")
_MS_NOSUID, _MS_NODEV = 2, 4
_MNT_DETACH = 2


class SessionSpace:
    """The home and temporary folders of one session, capped together at
    ``size_bytes`` where a tmpfs can be mounted (see the module docstring).

    ``capped`` says whether the cap holds (False: not root, or mounts refused; then
    the folders are plain folders of the server's temporary folder).
    """

    def __init__(self, size_bytes: int, *, parent: Path | None = None) -> None:
        self.size_bytes = size_bytes
        folder = parent or Path(tempfile.gettempdir())
        _sweep(folder)
        self.root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=folder))
        self.capped = False
        self.problem: str | None = None
        if os.geteuid() == 0:
            self.problem = _mount_tmpfs(self.root, size_bytes)
            self.capped = self.problem is None
        else:
            self.problem = "the disk cap needs the server to run as root (it mounts a tmpfs)"
        os.chmod(self.root, 0o711)
        for name in ("home", *TOPS.values()):
            (self.root / name).mkdir(mode=0o700)

    @property
    def home(self) -> Path:
        """The session's home (its ``HOME`` and ``TMPDIR``)."""
        return self.root / "home"

    def tops(self) -> dict[str, Path]:
        """Each of ``/tmp``, ``/var/tmp``, ``/dev/shm`` and the folder standing for it."""
        return {top: self.root / name for top, name in TOPS.items()}

    def give_to(self, uid: int) -> None:
        """Hand the places and what is in them to ``uid`` (a new worker's user)."""
        for place in (self.home, *self.tops().values()):
            chown_tree(place, uid)

    def take_back(self) -> None:
        """Empty the temporary folders and hand the home to the server's user: between
        two workers of one episode, the home is kept and no user id may use it."""
        for folder in self.tops().values():
            _empty(folder)
            os.chown(folder, os.geteuid(), os.getegid())
        with contextlib.suppress(OSError):
            chown_tree(self.home, os.geteuid())

    def used_bytes(self) -> int:
        """Bytes written in the space (the tmpfs's use when capped)."""
        if self.capped:
            stats = os.statvfs(self.root)
            return (stats.f_blocks - stats.f_bfree) * stats.f_frsize
        return sum(entry.stat().st_size for entry in self.root.rglob("*") if entry.is_file())

    def remove(self) -> None:
        """Unmount and remove everything (idempotent)."""
        _remove(self.root, self.capped)
        self.capped = False

    def __repr__(self) -> str:
        cap = f"{self.size_bytes >> 20} MiB" if self.capped else "uncapped"
        return f"<SessionSpace {self.root} {cap}>"


def _mount_tmpfs(target: Path, size_bytes: int) -> str | None:
    """Mount a tmpfs of ``size_bytes`` on ``target``; None, or why it failed."""
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={max(size_bytes, 4096)},mode=0711".encode()
    flags = _MS_NOSUID | _MS_NODEV
    if libc.mount(b"tmpfs", str(target).encode(), b"tmpfs", flags, options) != 0:
        errno = ctypes.get_errno()
        return f"mounting a tmpfs was refused: {os.strerror(errno)}"
    return None


def _unmount(target: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2(str(target).encode(), _MNT_DETACH)


def _remove(root: Path, mounted: bool) -> None:
    if mounted or _is_mount(root):
        _unmount(root)
    shutil.rmtree(root, ignore_errors=True)


def _is_mount(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return os.path.ismount(path)
    return False


def sweep_abandoned(folder: Path | None = None) -> None:
    """Unmount and remove the spaces in ``folder`` (default: the temporary folder) of
    servers that are gone (killed before they could); a server calls it as it starts."""
    _sweep(folder or Path(tempfile.gettempdir()))


def _sweep(folder: Path) -> None:
    """Remove the spaces of servers that are gone (killed before they could)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = _NAME.fullmatch(entry.name)
            if match is None or Path(f"/proc/{match[1]}").exists():
                continue
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid == os.geteuid():
                    _remove(Path(entry.path), mounted=False)


def _empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            path = Path(entry.path)
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False) and not os.path.ismount(path):
                    shutil.rmtree(path)
                else:
                    path.unlink()


def chown_tree(root: Path, uid: int) -> None:
    """Give ``root`` and everything in it to ``uid``, links as they are."""
    os.chown(root, uid, uid)
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            with contextlib.suppress(OSError):  # gone meanwhile
                os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)
