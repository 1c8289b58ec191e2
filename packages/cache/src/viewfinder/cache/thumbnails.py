"""Pictures of hashed regions: what healing searches for, and what mismatch reports show."""

from __future__ import annotations

import base64
import binascii

from PIL import Image

from viewfinder.cache.errors import CacheFileError
from viewfinder.core import imaging
from viewfinder.core.errors import ScreenshotDecodeError
from viewfinder.core.geometry import Region

#: Longest side of a stored thumbnail, in pixels: a 100 px region at 64 px is ~2-4 kB.
DEFAULT_THUMBNAIL_SIZE = 64


def region_thumbnail(
    image: Image.Image, region: Region | None, size: int | None = DEFAULT_THUMBNAIL_SIZE
) -> Image.Image:
    """``region`` of ``image`` (all of it when None), shrunk to at most ``size`` pixels a
    side (None: kept at its own size, as template matching wants it)."""
    part = image.crop(region.box) if region is not None else image.copy()
    part = part.convert("RGB")
    if size is not None:
        part.thumbnail((size, size), Image.Resampling.LANCZOS)
    return part


def encode_thumbnail(thumbnail: Image.Image) -> str:
    """The thumbnail as base64 PNG text (what a block's ``visual_thumbnail`` holds)."""
    return base64.b64encode(imaging.encode(thumbnail, "png")).decode("ascii")


def decode_thumbnail(text: str, *, step: int | None = None) -> Image.Image:
    """A block's ``visual_thumbnail`` back as an RGB image."""
    try:
        return imaging.decode(base64.b64decode(text, validate=True)).convert("RGB")
    except (binascii.Error, ValueError, ScreenshotDecodeError) as exc:
        raise CacheFileError(
            f"thumbnail is not a base64 PNG ({exc})",
            step=step,
            field=f"trajectory[{step}].visual_thumbnail" if step is not None else None,
        ) from exc
