"""Writing session files whole or not at all.

A reader (or a recorder killed with SIGKILL) must never see half a file: every file is
written under a temporary name in the same folder and moved into place with
``os.replace``, which is atomic on POSIX. With ``fsync`` the bytes (and the rename) are
also on the disk before the call returns, so a power cut cannot leave a manifest line
pointing at a frame the disk never got.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from viewfinder.recorder.errors import SessionWriteError


def write_whole(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_folder(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(
    path: Path, data: bytes, *, fsync: bool = False, mtime: float | None = None
) -> None:
    """Replace ``path`` with ``data`` atomically; :class:`SessionWriteError` on failure.

    ``mtime`` (seconds since the epoch) stamps the file, so a frame file carries the time
    its pixels were captured rather than the time it was copied.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_whole(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mtime is not None:
            os.utime(tmp, (mtime, mtime))
        os.replace(tmp, path)
        if fsync:
            fsync_folder(path.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise SessionWriteError(path, exc) from exc


def make_folder(path: Path) -> None:
    """Create ``path`` (and its parents); :class:`SessionWriteError` when it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied", str(path))
    except OSError as exc:
        raise SessionWriteError(path, exc) from exc
