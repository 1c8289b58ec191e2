"""Pictures behind a step's URLs: the frame as it is, or a small JPEG for the timeline.

A frame file is opened once under PATH (:func:`~viewfinder.viewer.confine.open_confined`)
and what is served, or decoded, is that open file. Thumbnails are made on first request
and kept (least recently used out first), so a 1,000-step timeline costs one decode per
frame once, and only for the frames that scroll into view (the page loads them lazily).

A PNG of 13000x13000 pixels may weigh half a megabyte and decode to 676 MB. So a frame
is measured from its header before it is decoded: over :data:`MAX_PIXELS` it gets no
thumbnail (422, saying so; the full frame is still served as it is); JPEGs decode
reduced (``draft``), PNGs are reduced as soon as they are read (``thumbnail``); and
decodes run :data:`DECODERS` at a time on a thread of their own, so the memory they
take is bounded (one 8K frame's) whatever the page asks for at once.
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
import warnings
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from viewfinder.core.imaging import sniff_format
from viewfinder.viewer.artifacts.model import FrameSource
from viewfinder.viewer.confine import open_confined
from viewfinder.viewer.errors import MissingFileError, RefusedPathError

#: Longest side of a thumbnail, in pixels.
THUMB_SIZE = 240
#: The most pixels a thumbnail is made from: an 8K screen.
MAX_PIXELS = 7680 * 4320
#: Frames decoded at once, each on a thread of its own. One: a second thread keeps the
#: memory of its own last decode (glibc gives each thread its arena), which measured
#: 333 MiB at the peak for six 8K frames against 205 MiB with one.
DECODERS = 1
#: The largest frame file read for a thumbnail.
MAX_FRAME_BYTES = 64 * 1024 * 1024
_MEDIA = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}


class PictureError(Exception):
    """A picture that is refused (403), not there (404) or cannot be made (422)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def media_type(data: bytes) -> str:
    return _MEDIA.get(sniff_format(data) or "", "application/octet-stream")


def open_frame(root: Path, source: Path) -> int:
    """An fd of the frame file ``source`` under ``root``; :class:`PictureError` otherwise."""
    try:
        return open_confined(root, source)
    except RefusedPathError as exc:
        raise PictureError(403, str(exc)) from None
    except MissingFileError as exc:
        raise PictureError(404, str(exc)) from None


class Thumbnails:
    """Small JPEGs of frames, kept for ``keep`` frames."""

    def __init__(self, keep: int = 4000, max_pixels: int = MAX_PIXELS) -> None:
        self._keep = keep
        self._made: OrderedDict[tuple[object, ...], bytes] = OrderedDict()
        self._lock = threading.Lock()
        self.max_pixels = max_pixels
        self._decoders = ThreadPoolExecutor(DECODERS, thread_name_prefix="viewfinder-thumbs")

    async def of(self, source: int | bytes, key: tuple[object, ...]) -> bytes:
        """The thumbnail of ``source`` (an open frame file, or the picture's bytes)."""
        if isinstance(source, int):
            found = os.fstat(source)
            key = (*key, found.st_dev, found.st_ino, found.st_mtime_ns, found.st_size)
        with self._lock:
            made = self._made.get(key)
            if made is not None:
                self._made.move_to_end(key)
                return made
        loop = asyncio.get_running_loop()
        made = await loop.run_in_executor(self._decoders, self._make, source)
        with self._lock:
            self._made[key] = made
            while len(self._made) > self._keep:
                self._made.popitem(last=False)
        return made

    def close(self) -> None:
        self._decoders.shutdown(wait=False, cancel_futures=True)

    def _make(self, source: int | bytes) -> bytes:
        data = source if isinstance(source, bytes) else _read(source)
        try:
            with warnings.catch_warnings():
                # the size is checked against our own, lower cap right below: Pillow's
                # warning for a large header says nothing more
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                opened = Image.open(io.BytesIO(data))
            with opened as image:
                width, height = image.size
                if width * height > self.max_pixels:
                    raise PictureError(
                        422,
                        f"the frame is {width}x{height} ({width * height / 1e6:.0f} megapixels);"
                        f" thumbnails are made of frames up to {self.max_pixels / 1e6:.0f} "
                        "megapixels: open the full frame instead",
                    )
                image.draft("RGB", (THUMB_SIZE, THUMB_SIZE))  # JPEGs decode smaller
                image.thumbnail((THUMB_SIZE, THUMB_SIZE), Image.Resampling.BILINEAR)
                small = image.convert("RGB")
        except Image.DecompressionBombError as exc:
            raise PictureError(
                422, f"the frame is too large to decode ({exc}); thumbnails are made of frames"
                f" up to {self.max_pixels / 1e6:.0f} megapixels: open the full frame instead"
            ) from None  # fmt: skip
        except (OSError, UnidentifiedImageError, ValueError) as exc:
            raise PictureError(422, f"the frame cannot be decoded: {exc}") from None
        out = io.BytesIO()
        small.save(out, "JPEG", quality=75)
        return out.getvalue()


def _read(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    if size > MAX_FRAME_BYTES:
        raise PictureError(
            422, f"the frame file is {size} bytes; thumbnails are made of files up to "
            f"{MAX_FRAME_BYTES} bytes"
        )  # fmt: skip
    chunks, read = [], 0
    while read < size:
        chunk = os.pread(fd, size - read, read)
        if not chunk:
            break
        chunks.append(chunk)
        read += len(chunk)
    return b"".join(chunks)


def check_source(source: FrameSource | None) -> Path | bytes:
    """The picture's file or bytes; :class:`PictureError` when it is refused or missing."""
    if source is None:
        raise PictureError(404, "no such picture")
    if isinstance(source, str):
        raise PictureError(403 if source.startswith("refused") else 404, source)
    return source
