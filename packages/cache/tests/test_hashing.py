"""Hashes are bit-identical to imagehash's; distances and regions behave as documented."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import imagehash
import numpy as np
import pytest
from PIL import Image, ImageDraw

from viewfinder.cache import (
    HashSettingsError,
    RegionHasher,
    hamming_distance,
    hash_length,
    image_hash,
    region_around,
)
from viewfinder.cache.resample import resize_grey
from viewfinder.core import Point, Region, RegionError

IMAGEHASH: dict[str, Callable[..., Any]] = {
    "phash": imagehash.phash,
    "ahash": imagehash.average_hash,
    "dhash": imagehash.dhash,
    "whash": imagehash.whash,
}
SIZES = {
    "phash": [2, 5, 8, 12, 16],
    "ahash": [2, 5, 8, 16],
    "dhash": [3, 8, 16],
    "whash": [2, 4, 8],
}


def ui_like(width: int, height: int, seed: int) -> Image.Image:
    """Flat areas, rectangles and text: what screens are made of (many DCT ties)."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (width, height), (240, 240, 240))
    draw = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(1, 6))):
        x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        draw.rectangle((x, y, x + int(rng.integers(2, 60)), y + int(rng.integers(2, 30))), colour)
    draw.text((3, 3), "Submit", fill=(0, 0, 0))
    return image


def sample_images() -> list[Image.Image]:
    rng = np.random.default_rng(7)
    images = [
        Image.new("RGB", (100, 100), (255, 255, 255)),  # flat: every AC coefficient ties
        Image.new("RGB", (100, 100), (0, 0, 0)),
        Image.new("RGB", (37, 100), (12, 200, 40)),  # clipped at a screen edge
        Image.fromarray(rng.integers(0, 256, (100, 100, 3), dtype=np.uint8)),
        Image.fromarray(rng.integers(0, 256, (64, 91, 3), dtype=np.uint8)),
        Image.new("RGBA", (100, 100), (10, 20, 30, 128)),
    ]
    images += [ui_like(100, 100, seed) for seed in range(12)]
    images += [
        ui_like(int(w), int(h), 100 + i)
        for i, (w, h) in enumerate([(50, 100), (100, 50), (13, 9), (200, 120)])
    ]
    return images


@pytest.mark.parametrize("method", sorted(IMAGEHASH))
def test_hash_is_bit_identical_to_imagehash(method: str) -> None:
    compared = 0
    for image in sample_images():
        for size in SIZES[method]:
            expected = str(IMAGEHASH[method](image, hash_size=size))
            assert RegionHasher(method, size).hash_image(image) == expected, (method, size, image)
            compared += 1
    assert compared >= 40


def test_phash_matches_imagehash_on_many_ui_regions() -> None:
    # UI regions tie at the DCT median often; those must take the exact fallback path.
    hasher = RegionHasher("phash", 8)
    for seed in range(200):
        image = ui_like(100, 100, 1000 + seed)
        assert hasher.hash_image(image) == str(imagehash.phash(image)), seed


def test_resize_is_pillows_lanczos_exactly() -> None:
    rng = np.random.default_rng(3)
    for trial in range(300):
        height, width = (int(v) for v in rng.integers(1, 130, 2))
        pixels = rng.integers(0, 256, (height, width), dtype=np.uint8)
        if trial % 2:
            pixels = (pixels > 128).astype(np.uint8) * 255  # hard edges: overshoot and clipping
        random_size = (int(rng.integers(1, 70)), int(rng.integers(1, 70)))
        for size in [(8, 8), (9, 8), (32, 32), random_size]:
            expected = np.asarray(Image.fromarray(pixels).resize(size, Image.Resampling.LANCZOS))
            assert np.array_equal(resize_grey(pixels, *size), expected), (pixels.shape, size)


def test_default_hash_is_sixteen_hex_digits() -> None:
    digest = image_hash(ui_like(100, 100, 1))
    assert len(digest) == 16 == hash_length(8)
    int(digest, 16)
    assert hash_length(16) == 64 and hash_length(5) == 7


def test_identical_images_are_at_distance_zero() -> None:
    first, second = ui_like(100, 100, 5), ui_like(100, 100, 5)
    for method in IMAGEHASH:
        assert hamming_distance(image_hash(first, method), image_hash(second, method)) == 0


def test_different_images_are_above_the_default_threshold() -> None:
    button = Image.new("RGB", (100, 100), (240, 240, 240))
    ImageDraw.Draw(button).rectangle((20, 35, 80, 65), fill=(30, 90, 200))
    moved = Image.new("RGB", (100, 100), (240, 240, 240))
    ImageDraw.Draw(moved).rectangle((0, 0, 30, 25), fill=(30, 90, 200))
    for method in ("phash", "ahash"):
        assert hamming_distance(image_hash(button, method), image_hash(moved, method)) > 10


def test_hamming_distance_counts_differing_bits() -> None:
    assert hamming_distance("0000000000000000", "0000000000000000") == 0
    assert hamming_distance("0000000000000000", "ffffffffffffffff") == 64
    assert hamming_distance("8000000000000001", "0000000000000000") == 2
    a, b = imagehash.hex_to_hash("c3a1f00f12345678"), imagehash.hex_to_hash("c3a1f00f12345670")
    assert hamming_distance("c3a1f00f12345678", "c3a1f00f12345670") == a - b


def test_hamming_distance_rejects_mismatched_hashes() -> None:
    with pytest.raises(HashSettingsError, match="different lengths"):
        hamming_distance("ff", "ffff")
    with pytest.raises(HashSettingsError, match="hexadecimal"):
        hamming_distance("zz", "ff")


def test_region_in_the_centre_is_the_full_square() -> None:
    assert region_around(Point(x=320, y=240), 100, 640, 480) == Region(
        x=270, y=190, width=100, height=100
    )


def test_region_at_the_edges_is_clipped() -> None:
    assert region_around(Point(x=5, y=3), 100, 640, 480) == Region(x=0, y=0, width=55, height=53)
    assert region_around(Point(x=639, y=479), 100, 640, 480) == Region(
        x=589, y=429, width=51, height=51
    )


def test_region_for_a_point_outside_the_screen_is_an_error() -> None:
    with pytest.raises(RegionError, match="outside"):
        region_around(Point(x=640, y=10), 100, 640, 480)


def test_action_without_a_point_hashes_the_whole_frame() -> None:
    frame = ui_like(300, 200, 9)
    assert region_around(None, 100, 300, 200) is None
    assert image_hash(frame, "phash", 8, None) == str(imagehash.phash(frame))


def test_region_hash_equals_imagehash_of_the_crop() -> None:
    frame = ui_like(400, 300, 11)
    region = region_around(Point(x=10, y=290), 100, 400, 300)
    assert region is not None
    assert image_hash(frame, "ahash", 8, region) == str(
        imagehash.average_hash(frame.crop(region.box))
    )


@pytest.mark.parametrize(
    ("method", "size", "match"),
    [("xhash", 8, "unknown hash method"), ("phash", 1, "at least 2"), ("whash", 6, "power of two")],
)
def test_bad_hash_settings_are_typed_errors(method: str, size: int, match: str) -> None:
    with pytest.raises(HashSettingsError, match=match):
        RegionHasher(method, size)


def test_negative_region_size_is_a_typed_error() -> None:
    with pytest.raises(HashSettingsError, match="positive"):
        region_around(Point(x=1, y=1), -5, 100, 100)
