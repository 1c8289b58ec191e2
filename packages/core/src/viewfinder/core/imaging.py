"""Turning pixels into encoded images, fast.

Backends hand raw pixels (usually BGRX rows straight from a framebuffer) to
:func:`encode_raw`, which builds one PIL image without extra copies and encodes it.

PNG is written here rather than by Pillow, with settings chosen by measurement (see
docs/benchmarks.md, "PNG settings", and decision 10 in docs/decisions.md): every row
unfiltered, deflated by libdeflate at level :data:`PNG_COMPRESS_LEVEL`. On screen
content (flat fills, text, sharp edges) unfiltered rows compress better than Pillow's
adaptive row filters, which also cost about as much time as the compression.

Deflate is most of the time, so a large frame is cut into parts that libdeflate
deflates on several threads at once (it releases the GIL). Every part but the last is
then made continuable (:mod:`viewfinder.core._deflate_parts`: its final bit cleared, a
byte-aligned empty block after it), so the parts join into one zlib stream, whatever
the decoder. Those parts are a little smaller, since finding their last block costs an
inflate pass, so all threads finish together. Each part starts without the previous
part's history, which costs well under 0.1% in size. JPEG and WebP go through Pillow.
"""

from __future__ import annotations

import functools
import io
import itertools
import os
import struct
import threading
import warnings
from collections.abc import Callable
from typing import Literal

import deflate
from PIL import Image

from viewfinder.core import _allocator, _deflate_parts
from viewfinder.core.errors import ScreenshotDecodeError

ImageFormat = Literal["png", "jpeg", "webp"]
FORMATS: tuple[ImageFormat, ...] = ("png", "jpeg", "webp")

#: libdeflate level for PNG output (1-12); see the module docstring and docs/benchmarks.md.
PNG_COMPRESS_LEVEL = 7
#: Rows smaller than this are deflated on the calling thread alone.
PNG_PARALLEL_MIN_BYTES = 512 * 1024
#: At most this many threads deflate one image.
PNG_MAX_THREADS = 4
# A part that another follows costs deflate plus an inflate pass to find its last block:
# about 1.3 times the deflate alone on screen rows, so it gets 1 / 1.3 of the bytes of
# the last part and the threads finish together (benchmarks/capture.py measures).
_CONTINUED_RELATIVE_SPEED = 0.77
#: Quality for lossy formats when the caller gives none.
DEFAULT_QUALITY = 85

MIME_TYPES: dict[str, str] = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
_PIL_FORMATS: dict[str, str] = {"png": "PNG", "jpeg": "JPEG", "webp": "WEBP"}


def normalize_format(fmt: str) -> ImageFormat:
    """Accept ``png``, ``jpeg``/``jpg`` or ``webp`` in any case; raise ``ValueError`` otherwise."""
    lowered = fmt.lower().strip().lstrip(".")
    if lowered == "jpg":
        lowered = "jpeg"
    if lowered not in FORMATS:
        raise ValueError(f"unsupported image format {fmt!r}; use one of: png, jpeg, webp")
    return lowered


def sniff_format(data: bytes) -> ImageFormat | None:
    """The format of encoded image bytes by their magic number, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def encode(image: Image.Image, fmt: str = "png", quality: int | None = None) -> bytes:
    """Encode a PIL image as png, jpeg or webp with viewfinder's settings."""
    target = normalize_format(fmt)
    if target == "jpeg" and image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    if target == "png":
        return encode_png(image)
    out = io.BytesIO()
    image.save(out, _PIL_FORMATS[target], quality=quality or DEFAULT_QUALITY)
    return out.getvalue()


# PNG colour types by PIL mode: (colour type, bytes per pixel)
_PNG_MODES = {"L": (0, 1), "RGB": (2, 3), "RGBA": (6, 4)}
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ZLIB_HEADER = b"\x78\x9c"  # deflate, 32 KiB window, default level


def _png_chunk(kind: bytes, body: bytes | bytearray) -> list[bytes | bytearray]:
    """A PNG chunk's pieces (length, type, body, CRC), to be joined without copying body twice."""
    crc = deflate.crc32(body, deflate.crc32(kind))
    return [struct.pack(">I", len(body)) + kind, body, struct.pack(">I", crc)]


def encode_png(
    image: Image.Image, level: int = PNG_COMPRESS_LEVEL, threads: int | None = None
) -> bytes:
    """Encode an image as an 8-bit PNG with unfiltered rows.

    ``level`` is libdeflate's (1-12). ``threads`` caps how many threads deflate the
    rows (default: the CPUs this process may use, at most :data:`PNG_MAX_THREADS`);
    images under :data:`PNG_PARALLEL_MIN_BYTES` of rows always use one.
    """
    _allocator.keep_frame_buffers()  # once: frame-sized blocks reused, not re-faulted
    threads = png_threads() if threads is None else threads
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    if image.mode not in _PNG_MODES:
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    colour_type, depth = _PNG_MODES[image.mode]
    width, height = image.size
    # Pillow's raw encoder zero-pads each row to the stride it is given: with one spare
    # byte that is "row 0, 0, row 1, 0, ...", so the unfiltered rows (filter type 0
    # before every row) are that shifted by one byte, with no join.
    padded = memoryview(image.tobytes("raw", image.mode, width * depth + 1))
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"".join(
        [
            _PNG_SIGNATURE,
            *_png_chunk(b"IHDR", header),
            *_png_chunk(b"IDAT", _zlib_stream(padded, level, threads)),
            *_png_chunk(b"IEND", b""),
        ]
    )


def png_threads() -> int:
    """How many threads :func:`encode_png` deflates a large image on by default.

    The CPUs this process may run on, at most :data:`PNG_MAX_THREADS`.
    """
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(available, PNG_MAX_THREADS))


def _zlib_stream(padded: memoryview, level: int, threads: int) -> bytes | bytearray:
    """One zlib stream of ``b"\\0" + padded[:-1]`` (the PNG rows), deflated on ``threads``."""
    rows = padded[:-1]
    length = len(rows) + 1
    if threads == 1 or length < PNG_PARALLEL_MIN_BYTES or not _deflate_parts.available():
        return deflate.zlib_compress(b"\0" + rows, level)
    # Part boundaries in the stream; every part but the last also pays an inflate pass.
    share = _CONTINUED_RELATIVE_SPEED / (1 + (threads - 1) * _CONTINUED_RELATIVE_SPEED)
    bounds = [round(length * share * part) for part in range(threads)] + [length]

    def piece(start: int, end: int) -> bytes | memoryview:
        # the stream's byte i is b"\0" for i == 0, else rows[i - 1]
        return b"\0" + rows[: end - 1] if start == 0 else rows[start - 1 : end - 1]

    def continued_part(start: int, end: int) -> bytearray:
        return _deflate_parts.make_continuable(deflate.deflate_compress(piece(start, end), level))

    waits = [
        _in_background(functools.partial(continued_part, start, end))
        for start, end in itertools.pairwise(bounds[:-1])
    ]
    last = deflate.deflate_compress(piece(bounds[-2], length), level)
    trailer = struct.pack(">I", deflate.adler32(rows, deflate.adler32(b"\0")))
    return b"".join([_ZLIB_HEADER, *(wait() for wait in waits), last, trailer])


def _in_background(job: Callable[[], bytearray]) -> Callable[[], bytearray]:
    """Start ``job`` on a thread of its own; return a function that waits for its result.

    When no thread can be started (a process at its thread limit, as in the code env's
    sandbox), the job runs on the caller's thread when its result is asked for.
    """
    outcome: list[bytearray] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(job())
        except BaseException as exc:  # handed to the waiting thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="viewfinder-png", daemon=True)
    try:
        thread.start()
    except RuntimeError:
        return job

    def wait() -> bytearray:
        thread.join()
        if failure:
            raise failure[0]
        return outcome[0]

    return wait


def image_from_raw(
    buffer: bytes | bytearray | memoryview,
    width: int,
    height: int,
    raw_mode: str = "BGRX",
    stride: int = 0,
) -> Image.Image:
    """Build an RGB image from raw pixel rows (``stride`` bytes apart; 0 = tightly packed)."""
    # frombuffer decodes straight from the buffer (one pass, no intermediate copy)
    return Image.frombuffer("RGB", (width, height), buffer, "raw", raw_mode, stride, 1)  # type: ignore[arg-type]


def encode_raw(
    buffer: bytes | bytearray | memoryview,
    width: int,
    height: int,
    fmt: str = "png",
    raw_mode: str = "BGRX",
    stride: int = 0,
    quality: int | None = None,
) -> bytes:
    """Encode raw pixel rows straight to an image file's bytes."""
    return encode(image_from_raw(buffer, width, height, raw_mode, stride), fmt, quality)


class StillFrames:
    """Encodes successive frames of one screen, skipping the encoder when nothing changed.

    A frame whose raw pixels equal those of the previous frame of the same ``key``
    (region), format and quality gets the previous frame's encoded bytes back: one
    ``memcmp`` instead of a deflate. Keeps the last frame of at most ``max_keys`` keys.
    Safe to use from several threads.
    """

    def __init__(self, max_keys: int = 4) -> None:
        self.max_keys = max_keys
        self._frames: dict[object, tuple[bytes | bytearray, bytes]] = {}
        self._lock = threading.Lock()
        #: How many frames were handed back without encoding.
        self.reused = 0

    def encode_raw(
        self,
        pixels: bytes | bytearray,
        width: int,
        height: int,
        fmt: str = "png",
        quality: int | None = None,
        key: object = None,
    ) -> tuple[bytes, bool]:
        """``(encoded bytes, reused)`` for BGRX ``pixels``; keeps a reference to ``pixels``."""
        slot = (key, width, height, normalize_format(fmt), quality)
        with self._lock:
            previous = self._frames.get(slot)
        if previous is not None and previous[0] == pixels:
            with self._lock:
                self.reused += 1
            return previous[1], True
        data = encode_raw(pixels, width, height, fmt, quality=quality)
        with self._lock:
            self._frames.pop(slot, None)
            self._frames[slot] = (pixels, data)
            while len(self._frames) > self.max_keys:  # the oldest key goes first
                del self._frames[next(iter(self._frames))]
        return data, False

    def clear(self) -> None:
        """Forget every kept frame."""
        with self._lock:
            self._frames.clear()


#: The most pixels :func:`decode` turns into an image: an 8K screen (33 MP) and a tall
#: full-page capture fit, while a few hundred KB of PNG claiming 12000x12000 (144 MP,
#: over 1 GiB once decoded) is refused from its header before any pixel is decoded.
MAX_DECODE_PIXELS = 40_000_000


class ImageTooLargeError(ScreenshotDecodeError):
    """An image has more pixels than may be decoded (see :data:`MAX_DECODE_PIXELS`)."""


def check_pixels(width: int, height: int, max_pixels: int = MAX_DECODE_PIXELS) -> None:
    """Raise :class:`ImageTooLargeError` when ``width`` x ``height`` is over ``max_pixels``."""
    if width * height > max_pixels:
        raise ImageTooLargeError(
            f"the image is {width}x{height} ({width * height / 1e6:.0f} MP), over the "
            f"{max_pixels / 1e6:g} MP limit of a decode; scale it down before sending it"
        )


def decode(data: bytes, *, max_pixels: int = MAX_DECODE_PIXELS) -> Image.Image:
    """Open encoded image bytes, raising :class:`ScreenshotDecodeError` when they are not one.

    The size is read from the header first: past ``max_pixels`` nothing is decoded and
    :class:`ImageTooLargeError` says the limit (Pillow opens lazily; ``load()`` decodes).
    """
    image = _open(data, "image data could not be decoded", max_pixels)
    check_pixels(image.width, image.height, max_pixels)
    try:
        image.load()
    except Exception as exc:  # PIL raises several unrelated types for bad data
        raise ScreenshotDecodeError(
            f"image data could not be decoded ({exc}); expected PNG, JPEG or WebP bytes"
        ) from exc
    return image


def image_size(data: bytes) -> tuple[int, int]:
    """Width and height of encoded image bytes, read from the header alone (no decoding)."""
    with _open(data, "image header could not be read") as image:
        return image.size


def _open(data: bytes, failure: str, max_pixels: int = MAX_DECODE_PIXELS) -> Image.Image:
    """The lazily opened image (its header read, no pixel decoded)."""
    try:
        with warnings.catch_warnings():
            # the pixels are counted against our own, lower limit: Pillow's warning for a
            # large header says nothing more
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:  # past twice Pillow's own limit
        raise ImageTooLargeError(
            f"{exc}; the limit of a decode is {max_pixels / 1e6:g} MP: scale it down "
            "before sending it"
        ) from None
    except Exception as exc:  # PIL raises several unrelated types for bad data
        raise ScreenshotDecodeError(f"{failure} ({exc}); expected PNG, JPEG or WebP bytes") from exc


def check_header(data: bytes, width: int, height: int, max_pixels: int = MAX_DECODE_PIXELS) -> None:
    """Check from its header alone that ``data`` is an image of ``width`` x ``height``
    pixels, at most ``max_pixels``; :class:`ScreenshotDecodeError` (for too many pixels
    :class:`ImageTooLargeError`) otherwise. Nothing is decoded."""
    size = image_size(data)
    if size != (width, height):
        raise ScreenshotDecodeError(
            f"the image says it is {width}x{height} but its data holds {size[0]}x{size[1]}; "
            "send the size the image has"
        )
    check_pixels(width, height, max_pixels)
