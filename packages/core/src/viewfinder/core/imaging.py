"""Turning pixels into encoded images, fast.

Backends hand raw pixels (usually BGRX rows straight from a framebuffer) to
:func:`encode_raw`, which builds one PIL image without extra copies and encodes it.
The PNG settings were chosen by measurement (see docs/benchmarks.md): compression
level 1 with PIL's default adaptive filtering encodes a busy 1920x1080 frame several
times faster than level 6 while the file stays smaller than a level-6 PNG written
without filtering (what mss's ``to_png`` does).
"""

from __future__ import annotations

import io
from typing import Literal

from PIL import Image

from viewfinder.core.errors import ScreenshotDecodeError

ImageFormat = Literal["png", "jpeg", "webp"]
FORMATS: tuple[ImageFormat, ...] = ("png", "jpeg", "webp")

#: zlib level for PNG output; see the module docstring and docs/benchmarks.md.
PNG_COMPRESS_LEVEL = 1
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
    out = io.BytesIO()
    if target == "png":
        image.save(out, "PNG", compress_level=PNG_COMPRESS_LEVEL)
    else:
        image.save(out, _PIL_FORMATS[target], quality=quality or DEFAULT_QUALITY)
    return out.getvalue()


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
