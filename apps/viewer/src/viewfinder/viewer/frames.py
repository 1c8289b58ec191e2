"""Pictures behind a step's URLs: the frame as it is, or a small JPEG for the timeline.

Thumbnails are made on first request and kept (least recently used out first), so a
1,000-step timeline costs one decode per frame once, and only for the frames that
scroll into view (the page loads them lazily).
"""

from __future__ import annotations

import io
import os
import threading
from collections import OrderedDict
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from viewfinder.core.imaging import sniff_format
from viewfinder.viewer.artifacts.model import FrameSource

#: Longest side of a thumbnail, in pixels.
THUMB_SIZE = 240
_MEDIA = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


class PictureError(Exception):
    """A picture that is refused (403) or not there (404)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def media_type(data: bytes) -> str:
    return _MEDIA.get(sniff_format(data) or "", "application/octet-stream")


class Thumbnails:
    """Small JPEGs of frames, kept for ``keep`` frames."""

    def __init__(self, keep: int = 4000) -> None:
        self._keep = keep
        self._made: OrderedDict[tuple[object, ...], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, source: Path | bytes, key: tuple[object, ...]) -> bytes:
        if isinstance(source, Path):
            stat = source.stat()
            key = (*key, str(source), stat.st_mtime_ns, stat.st_size)
        with self._lock:
            made = self._made.get(key)
            if made is not None:
                self._made.move_to_end(key)
                return made
        made = _thumbnail(source)
        with self._lock:
            self._made[key] = made
            while len(self._made) > self._keep:
                self._made.popitem(last=False)
        return made


def _thumbnail(source: Path | bytes) -> bytes:
    try:
        with Image.open(source if isinstance(source, Path) else io.BytesIO(source)) as image:
            image.draft("RGB", (THUMB_SIZE, THUMB_SIZE))  # JPEGs decode smaller at once
            small = image.convert("RGB")
    except (OSError, UnidentifiedImageError) as exc:
        raise PictureError(404, f"the frame cannot be decoded: {exc}") from None
    small.thumbnail((THUMB_SIZE, THUMB_SIZE), Image.Resampling.BILINEAR)
    out = io.BytesIO()
    small.save(out, "JPEG", quality=75)
    return out.getvalue()


def check_source(source: FrameSource | None) -> Path | bytes:
    """The picture's file or bytes; :class:`PictureError` when it is refused or missing."""
    if source is None:
        raise PictureError(404, "no such picture")
    if isinstance(source, str):
        raise PictureError(403 if source.startswith("refused") else 404, source)
    if isinstance(source, Path) and not os.path.isfile(source):
        raise PictureError(404, f"{source.name} is missing")
    return source
