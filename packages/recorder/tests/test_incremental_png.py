"""The live frame's PNG encoder: valid PNGs, and only changed bands compressed again."""

from __future__ import annotations

import io
import random
import zlib

import pytest
from PIL import Image, ImageDraw

from viewfinder.recorder.incremental_png import IncrementalPngEncoder, adler32_combine


def busy(width: int, height: int, seed: int = 3) -> Image.Image:
    rng = random.Random(seed)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for _ in range(300):
        x, y = rng.randrange(width), rng.randrange(height)
        draw.text((x, y), f"w{rng.randrange(999)}", fill=(rng.randrange(256), 40, 90))
    return image


def decoded(png: bytes) -> Image.Image:
    with Image.open(io.BytesIO(png)) as image:
        image.load()  # checks every chunk CRC and the stream's Adler-32
        return image.convert("RGB")


def test_adler32_combines_like_zlib() -> None:
    rng = random.Random(1)
    for _ in range(50):
        first = rng.randbytes(rng.randrange(0, 70000))
        second = rng.randbytes(rng.randrange(0, 70000))
        combined = adler32_combine(zlib.adler32(first), zlib.adler32(second), len(second))
        assert combined == zlib.adler32(first + second)


def test_frames_decode_to_their_pixels_and_only_changed_bands_are_redone() -> None:
    encoder = IncrementalPngEncoder(band_rows=16)
    image = busy(333, 250)  # neither side a multiple of anything
    first = encoder.encode(image)
    assert first is not None and decoded(first).tobytes() == image.tobytes()
    assert encoder.last_deflated == 16  # ceil(250 / 16)
    assert encoder.encode(image.copy()) is None
    assert encoder.last_deflated == 0
    ImageDraw.Draw(image).rectangle((300, 100, 310, 105), fill="black")  # rows 100-105
    second = encoder.encode(image)
    assert second is not None and decoded(second).tobytes() == image.tobytes()
    assert encoder.last_deflated == 1
    ImageDraw.Draw(image).point((0, 249), fill="red")  # the last, short band
    third = encoder.encode(image)
    assert third is not None and decoded(third).tobytes() == image.tobytes()
    assert encoder.last_deflated == 1


def test_a_new_size_or_mode_starts_afresh() -> None:
    encoder = IncrementalPngEncoder()
    assert encoder.encode(busy(64, 64)) is not None
    other = busy(80, 40).convert("RGBA")
    png = encoder.encode(other)
    assert png is not None and decoded(png).tobytes() == other.convert("RGB").tobytes()
    assert decoded(png).size == (80, 40)
    with pytest.raises(ValueError, match="band_rows"):
        IncrementalPngEncoder(band_rows=0)
