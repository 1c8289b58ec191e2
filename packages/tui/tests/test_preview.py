"""The half-block preview: sizes, and the colours it draws where they belong."""

from __future__ import annotations

from PIL import Image, ImageDraw
from rich.console import Console

from viewfinder.tui.preview import UPPER_HALF, HalfBlockImage, fit_size


def test_fit_size_keeps_the_aspect() -> None:
    assert fit_size((1280, 800), (40, 12)) == (38, 12)
    assert fit_size((1280, 200), (40, 12)) == (40, 3)
    assert fit_size((10, 10), (40, 12)) == (24, 12)
    assert fit_size((5000, 1), (40, 12)) == (40, 1)


def test_upper_and_lower_pixels_become_foreground_and_background() -> None:
    image = Image.new("RGB", (4, 4), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 3, 1), fill=(255, 0, 0))  # top half red
    draw.rectangle((0, 2, 3, 3), fill=(0, 0, 255))  # bottom half blue
    preview = HalfBlockImage(image, max_width=4, max_height=2)
    assert (preview.columns, preview.rows) == (4, 2)
    assert preview.cell_colors(0, 0) == ((255, 0, 0), (255, 0, 0))
    assert preview.cell_colors(3, 1) == ((0, 0, 255), (0, 0, 255))

    console = Console(width=20, color_system="truecolor", force_terminal=True)
    segments = [s for s in console.render(preview) if UPPER_HALF in s.text]
    assert segments[0].text == UPPER_HALF * 4  # a row of one colour is one segment
    assert segments[0].style.color.triplet == (255, 0, 0)  # type: ignore[union-attr]
    assert segments[1].style.bgcolor.triplet == (0, 0, 255)  # type: ignore[union-attr]


def test_rgba_and_grey_images() -> None:
    grey = Image.new("L", (2, 2), 128)
    assert HalfBlockImage(grey, 2, 1).cell_colors(0, 0) == ((128, 128, 128), (128, 128, 128))
    rgba = Image.new("RGBA", (2, 2), (10, 20, 30, 0))
    assert HalfBlockImage(rgba, 2, 1).cell_colors(1, 0)[0] == (10, 20, 30)
