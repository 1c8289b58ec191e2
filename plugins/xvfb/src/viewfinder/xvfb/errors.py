"""Errors only the xvfb plugin raises; everything else comes from :mod:`viewfinder.core.errors`."""

from __future__ import annotations

from viewfinder.core.errors import CaptureError, ViewfinderError


class DisplayStartError(ViewfinderError):
    """Xvfb exited before it was ready, or did not get ready in time.

    ``stderr`` holds what Xvfb printed, which usually names the cause (a bad
    ``-screen`` size, a full ``/tmp``, a missing font path, ...).
    """

    def __init__(self, message: str, stderr: str = "", returncode: int | None = None) -> None:
        self.stderr = stderr
        self.returncode = returncode
        detail = stderr.strip()
        if detail:
            # the last lines carry the fatal error; the first ones are routine warnings
            tail = "\n".join(detail.splitlines()[-15:])
            message = f"{message}\nXvfb said:\n{tail}"
        super().__init__(message)


class WindowNotViewableError(CaptureError):
    """The window exists but shows nothing on the screen (unmapped, or off-screen)."""


class DisplayNotFoundError(ViewfinderError, LookupError):
    """No display with that name is recorded in the display registry."""
