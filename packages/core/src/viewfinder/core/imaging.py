"""Turning pixels into encoded images, fast.

Backends hand raw pixels (usually BGRX rows straight from a framebuffer) to
:func:`encode_raw`, which builds one PIL image without extra copies and encodes it.

PNG is written here rather than by Pillow, with settings chosen by measurement (see
docs/benchmarks.md, "PNG settings"): every row unfiltered, deflated by libdeflate at
level :data:`PNG_COMPRESS_LEVEL`. On screen content (flat fills, text, sharp edges)
unfiltered rows compress better than Pillow's adaptive row filters, which also cost
about as much time as the compression; and libdeflate reaches zlib's ratio in well
under half of zlib's time. JPEG and WebP go through Pillow.
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Literal

import deflate
from PIL import Image

from viewfinder.core.errors import ScreenshotDecodeError

ImageFormat = Literal["png", "jpeg", "webp"]
FORMATS: tuple[ImageFormat, ...] = ("png", "jpeg", "webp")

#: libdeflate level for PNG output (1-12); see the module docstring and docs/benchmarks.md.
PNG_COMPRESS_LEVEL = 6
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


def _png_chunk(kind: bytes, body: bytes | bytearray) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def encode_png(image: Image.Image, level: int = PNG_COMPRESS_LEVEL) -> bytes:
    """Encode an image as an 8-bit PNG with unfiltered rows, deflated by libdeflate."""
    if image.mode not in _PNG_MODES:
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    colour_type, depth = _PNG_MODES[image.mode]
    width, height = image.size
    pixels = image.tobytes()
    stride = width * depth
    # filter type 0 (None) before every row
    rows = b"\0" + b"\0".join(pixels[at : at + stride] for at in range(0, stride * height, stride))
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return b"".join(
        (
            _PNG_SIGNATURE,
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", deflate.zlib_compress(rows, level)),
            _png_chunk(b"IEND", b""),
        )
    )


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


def decode(data: bytes) -> Image.Image:
    """Open encoded image bytes, raising :class:`ScreenshotDecodeError` when they are not one."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as exc:  # PIL raises several unrelated types for bad data
        raise ScreenshotDecodeError(
            f"image data could not be decoded ({exc}); expected PNG, JPEG or WebP bytes"
        ) from exc
    return image


def image_size(data: bytes) -> tuple[int, int]:
    """Width and height of encoded image bytes, read from the header alone (no decoding)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except Exception as exc:  # PIL raises several unrelated types for bad data
        raise ScreenshotDecodeError(
            f"image header could not be read ({exc}); expected PNG, JPEG or WebP bytes"
        ) from exc
