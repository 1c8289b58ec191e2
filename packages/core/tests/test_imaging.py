from __future__ import annotations

import pytest
from PIL import Image

from viewfinder.core import ScreenshotDecodeError, imaging


def test_encode_raw_reads_bgrx_rows_with_stride() -> None:
    # two pixels per row, plus 4 bytes of padding per row: stride 12
    row = bytes([255, 0, 0, 0, 0, 0, 255, 0]) + b"\x00" * 4  # blue, red (BGRX)
    image = imaging.image_from_raw(row * 3, 2, 3, "BGRX", stride=12)
    assert image.getpixel((0, 2)) == (0, 0, 255)
    assert image.getpixel((1, 2)) == (255, 0, 0)


@pytest.mark.parametrize("fmt", ["png", "jpeg", "webp", "JPG", ".PNG"])
def test_encode_formats(fmt: str) -> None:
    data = imaging.encode(Image.new("RGB", (8, 8), "green"), fmt)
    assert imaging.sniff_format(data) == imaging.normalize_format(fmt)


def test_unknown_format_says_which_are_supported() -> None:
    with pytest.raises(ValueError, match="png, jpeg, webp"):
        imaging.normalize_format("gif")


def test_decode_garbage() -> None:
    with pytest.raises(ScreenshotDecodeError):
        imaging.decode(b"\x89PNG\r\n\x1a\ntruncated")


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "P", "1"])
def test_png_round_trips_every_mode_exactly(mode: str) -> None:
    source = Image.new("RGB", (37, 23), (10, 200, 30))
    source.paste((250, 0, 128), (5, 5, 20, 15))
    image = source.convert(mode)
    data = imaging.encode_png(image)
    decoded = imaging.decode(data)
    expected = image if mode in ("RGB", "RGBA", "L") else image.convert("RGB")
    assert decoded.mode == expected.mode
    assert decoded.tobytes() == expected.tobytes()


def test_png_levels_trade_size_for_time() -> None:
    image = Image.effect_noise((64, 64), 40).convert("RGB")
    sizes = [len(imaging.encode_png(image, level)) for level in (1, 12)]
    assert sizes[1] <= sizes[0]


def test_image_size_reads_the_header_only() -> None:
    data = imaging.encode(Image.new("RGB", (31, 17), "red"), "webp")
    assert imaging.image_size(data) == (31, 17)
    with pytest.raises(ScreenshotDecodeError, match="header could not be read"):
        imaging.image_size(b"not an image")
