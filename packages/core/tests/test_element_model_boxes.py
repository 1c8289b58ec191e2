"""Element boxes in the model's coordinates, one factor per axis (logic only: the real
screens are in packages/desktop/tests/test_model_boxes_per_axis.py)."""

from __future__ import annotations

import pytest
from PIL import Image

from viewfinder.core import Element, ElementTree, Screenshot, set_of_mark, snapshot_text
from viewfinder.core.element_snapshot import scaled_box
from viewfinder.core.geometry import Region

SEND = Element(
    ref="e7", role="push button", name="Send", box=Region(x=40, y=500, width=320, height=50)
)


def test_a_box_is_scaled_by_each_axis_own_factor() -> None:
    # 1280x800 shown at 1024x768: 0.8 across, 0.96 down (not 0.8 down)
    text = snapshot_text(ElementTree(source="t", roots=(SEND,)), scale=(0.8, 0.96))
    assert text.splitlines() == [
        "elements (t, screen pixels x0.8 across, x0.96 down; 1 of 1 shown)",
        'e7 push button "Send" @32,480 256x48',
    ]


@pytest.mark.parametrize("factors", [(0.8, 0.96), (0.5, 0.5), (1366 / 1920, 768 / 1080)])
def test_every_model_pixel_of_a_listed_box_shows_only_the_element(
    factors: tuple[float, float],
) -> None:
    for x, width in ((0, 7), (3, 11), (41, 120), (999, 33)):
        shown = scaled_box(Region(x=x, y=x, width=width, height=width), factors)
        for axis, factor in enumerate(factors):
            first = (shown.x, shown.y)[axis]
            last = first + (shown.width, shown.height)[axis]
            # model pixel m shows the screen's [m / factor, (m + 1) / factor)
            assert first / factor >= x - 1e-6 and last / factor <= x + width + 1e-6


def test_set_of_mark_draws_on_each_axis_own_factor() -> None:
    shot = Screenshot.from_image(Image.new("RGB", (1024, 768), "white"), source="t")
    marked = set_of_mark(shot, [SEND], scale=(0.8, 0.96)).to_pil().convert("RGB")
    assert marked.getpixel((32, 480 + 24)) != (255, 255, 255)  # its left edge, mid-height
    assert marked.getpixel((32 + 255, 480 + 47)) != (255, 255, 255)  # bottom-right corner
    assert marked.getpixel((32, 400 + 24)) == (255, 255, 255)  # not at 0.8 down


def test_a_bad_factor_on_either_axis_is_refused() -> None:
    with pytest.raises(ValueError, match="more than 0 on each axis"):
        snapshot_text(ElementTree(source="t"), scale=(0.5, 0))
