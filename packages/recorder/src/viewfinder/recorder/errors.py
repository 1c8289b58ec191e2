"""Errors the recorder raises; all derive from :class:`viewfinder.core.ViewfinderError`."""

from __future__ import annotations

import errno
import os

from viewfinder.core.errors import ViewfinderError


class RecorderError(ViewfinderError):
    """Base class of the recorder's errors."""


class RecorderStateError(RecorderError, RuntimeError):
    """A recorder was used in the wrong state (started twice, stopped before starting, ...)."""


class SessionExistsError(RecorderError, FileExistsError):
    """The session folder already holds a recording and resuming was not asked for."""

    def __init__(
        self, session_dir: os.PathLike[str] | str, events: int, *, problem: str | None = None
    ) -> None:
        self.session_dir = str(session_dir)
        self.events = events
        super().__init__(
            problem
            or f"{self.session_dir} already holds a recording ({events} events); resume it "
            "with resume=True (`viewfinder record --resume`) or record into another folder"
        )


class SessionBusyError(RecorderError):
    """Another recorder is writing to the same session folder right now."""


class SessionWriteError(RecorderError):
    """A file of the session could not be written (folder unwritable, disk full, ...).

    What was written before stays intact: frames and manifest lines are written whole
    or not at all.
    """

    def __init__(self, path: os.PathLike[str] | str, cause: OSError) -> None:
        self.path = str(path)
        self.cause = cause
        super().__init__(f"cannot write {self.path}: {_reason(cause)}")


class SessionFormatError(RecorderError, ValueError):
    """A folder is not a recording, or a manifest line or frame of it cannot be read."""


class RecordingFailedError(RecorderError):
    """The recording stopped on an earlier error; ``cause`` holds that error."""

    def __init__(self, cause: BaseException) -> None:
        self.cause = cause
        super().__init__(
            f"the recording has stopped because of an earlier error: {cause}. "
            "What was recorded before it is intact; call stop() and start a new recording "
            "(or resume this one) once the cause is fixed"
        )


class InputSourceError(RecorderError):
    """An input source cannot listen (no X display, no RECORD extension, ...)."""


def _reason(cause: OSError) -> str:
    code = cause.errno
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full; free some space or record to another folder (--out)"
    if code == errno.EROFS:
        return "the file system is read-only; record to a writable folder (--out)"
    if code in (errno.EACCES, errno.EPERM):
        return "permission denied; record to a folder you can write to (--out)"
    if code in (errno.ENOTDIR, errno.ENOENT):
        return f"{cause.strerror or cause}; check that the session folder path is a folder"
    return f"{cause.strerror or cause}; check the session folder"
