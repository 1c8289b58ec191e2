"""Opening a session folder for recording: create it, lock it, refuse or resume."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from viewfinder.recorder.durable import make_folder
from viewfinder.recorder.errors import SessionBusyError, SessionExistsError, SessionWriteError
from viewfinder.recorder.layout import SessionLayout
from viewfinder.recorder.manifest import Manifest, cut_torn_tail, read_manifest
from viewfinder.recorder.metadata import SessionMetadata


class SessionFolder:
    """A session folder held by one recorder.

    :meth:`open` creates the folder, takes an exclusive lock on it (a second recorder
    on the same folder gets :class:`SessionBusyError`; the kernel drops the lock when
    the process dies, even by SIGKILL), and refuses a folder that already holds a
    recording unless ``resume`` is set, in which case the existing manifest is read so
    numbering carries on.
    """

    def __init__(self, root: str | os.PathLike[str], *, resume: bool = False) -> None:
        self.layout = SessionLayout(Path(root).expanduser().absolute())
        self.resume = resume
        self.manifest = Manifest()
        self.metadata: SessionMetadata | None = None
        #: True when the folder held no recording before this one opened it
        self.fresh = False
        self._created_root = False
        self._lock_fd: int | None = None

    @property
    def root(self) -> Path:
        return self.layout.root

    def open(self) -> None:
        layout = self.layout
        existed = layout.root.exists()
        _refuse_foreign_files(layout)
        make_folder(layout.root)
        self._lock()
        try:
            self.fresh = not layout.holds_recording()
            self._created_root = not existed
            if not self.fresh:
                existing = read_manifest(layout.manifest)
                if not self.resume:
                    raise SessionExistsError(layout.root, len(existing.entries))
                cut_torn_tail(layout.manifest, existing)
                self.manifest = existing
                if layout.metadata.exists():
                    self.metadata = SessionMetadata.load(layout.metadata)
            make_folder(layout.screenshots)
        except BaseException:
            self.close()
            raise

    def discard(self) -> None:
        """Remove what opening and starting a fresh recording created (after a failed start).

        Only for a folder that was fresh: an existing recording is never touched.
        """
        if not self.fresh:
            return
        layout = self.layout
        for path in (
            layout.current,
            layout.pretyping,
            layout.manifest,
            layout.metadata,
            layout.lock,
        ):
            with contextlib.suppress(OSError):
                path.unlink()
        for folder in (layout.screenshots, *((layout.root,) if self._created_root else ())):
            with contextlib.suppress(OSError):  # not empty: something else lives there
                folder.rmdir()

    def close(self) -> None:
        """Release the lock (idempotent)."""
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            self._lock_fd = None

    def _lock(self) -> None:
        path = self.layout.lock
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise SessionWriteError(path, exc) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise SessionBusyError(
                f"another recorder{f' (pid {holder})' if holder else ''} is recording into "
                f"{self.layout.root}; stop it first or record into another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd


def _refuse_foreign_files(layout: SessionLayout) -> None:
    # A folder that holds anything but a recording is someone's: never write into it
    # (frames are numbered 0.png, 1.png, ... and would overwrite theirs).
    root = layout.root
    if not root.is_dir():
        return
    recording = layout.holds_recording()
    ours = {layout.lock.name, layout.manifest.name, layout.metadata.name}
    if recording:
        ours |= {layout.screenshots.name, layout.videos.name}
    foreign = sorted(entry.name for entry in root.iterdir() if entry.name not in ours)
    if foreign:
        raise SessionExistsError(
            root,
            0,
            problem=f"{root} is not empty ({', '.join(foreign[:3])}"
            + (", ..." if len(foreign) > 3 else "")
            + ") and holds no recording; record into a new or empty folder",
        )


def _read_pid(fd: int) -> str:
    with contextlib.suppress(OSError):
        return os.pread(fd, 32, 0).decode(errors="replace").strip()
    return ""
