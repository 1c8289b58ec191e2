"""Full-size images a result could not carry, kept for the session and read back.

The result budget (:mod:`viewfinder.core.result_budget`) shrinks or re-encodes an image
that is over its client's limits; the image as the tool made it is written here, in the
session's folder (``.viewfinder-full-size/N.png``, for the server's user alone), and the result
links it as ``viewfinder://session/full-size/N.png``, which ``resources/read`` serves.
Only the newest :data:`KEPT` are kept, and all are removed when the session ends: an
agent that takes a screenshot a second does not fill the disk.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from pathlib import Path

from viewfinder.core import Screenshot

#: The URI prefix of a kept image; the rest is its file name.
FULL_SIZE_PREFIX = "viewfinder://session/full-size/"
#: Images kept per session; older ones are removed as new ones come.
KEPT = 64
_NAME = re.compile(r"(\d+)\.(png|jpeg|webp)")


class FullSizeImages:
    """The kept images of one session, in ``folder`` (made 0700 on first use)."""

    def __init__(self, folder: Path, kept: int = KEPT) -> None:
        self.folder = folder
        self.kept = kept
        self._lock = threading.Lock()
        self._count = 0

    def __call__(self, shot: Screenshot) -> tuple[str, str]:
        """Keep ``shot``; its URI and a description (a :class:`FullSizeKeeper`)."""
        with self._lock:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            number = self._count
            self._count += 1
            name = f"{number}.{shot.format}"
            path = self.folder / name
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(descriptor, "wb") as file:
                file.write(shot.data)
            for old in self.folder.glob(f"{number - self.kept}.*"):
                old.unlink(missing_ok=True)
        return (
            FULL_SIZE_PREFIX + name,
            f"the image at full size, {shot.width}x{shot.height} {shot.format.upper()} "
            f"({len(shot.data)} bytes)",
        )

    def clear(self) -> None:
        """Remove the kept images and their folder (the session ended: no link works)."""
        with self._lock:
            for path in self.folder.glob("*"):
                path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                self.folder.rmdir()

    def read(self, uri: str) -> tuple[bytes, str] | None:
        """The bytes and MIME type of the kept image ``uri`` names; None if it has none."""
        name = uri.removeprefix(FULL_SIZE_PREFIX)
        match = _NAME.fullmatch(name)
        if not uri.startswith(FULL_SIZE_PREFIX) or match is None:
            return None
        try:
            descriptor = os.open(self.folder / name, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        with os.fdopen(descriptor, "rb") as file:
            return file.read(), f"image/{match[2]}"
