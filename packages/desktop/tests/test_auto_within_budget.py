"""``target="auto"`` keeps every screen shape within Claude's image limits, and a click at
a point read off the screenshot lands on the widget drawn there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from viewfinder.desktop import ComputerTool

sys.path.insert(0, str(Path(__file__).parent))
from event_log import EventLog

COLOURS = {"red": (208, 32, 32), "green": (32, 160, 32), "blue": (32, 64, 208)}


def _centre_of(image: Image.Image, colour: tuple[int, int, int]) -> tuple[int, int]:
    """The middle of the pixels of ``colour`` in the screenshot (model pixels)."""
    difference = ImageChops.difference(image.convert("RGB"), Image.new("RGB", image.size, colour))
    mask = difference.convert("L").point(lambda value: 255 if value < 24 else 0)
    box = mask.getbbox()
    assert box is not None, f"no {colour} in the screenshot"
    return ((box[0] + box[2] - 1) // 2, (box[1] + box[3] - 1) // 2)


@pytest.mark.parametrize("size", [(2560, 1080), (1280, 1024)])
def test_auto_fits_the_image_budget_and_clicks_land_on_their_widget(
    size: tuple[int, int],
) -> None:
    from viewfinder.xvfb import Display

    with Display(*size) as display:
        app = EventLog(display)
        tool = ComputerTool(display, target="auto")
        try:
            width, height = tool.model_size
            # within Claude's limits, so no client shrinks it again
            assert max(width, height) <= 1568 and width * height <= 1_150_000, tool.model_size
            # the screen's shape, to a pixel
            assert abs(width / height - size[0] / size[1]) < 2 / min(width, height)
            shot = tool({"action": "screenshot"}).screenshot
            assert shot is not None and shot.size == (width, height)
            image = shot.to_pil()
            for name, colour in COLOURS.items():
                x, y = _centre_of(image, colour)
                mark = app.mark()
                result = tool({"action": "left_click", "coordinate": [x, y]})
                assert not result.is_error, result.error
                app.wait_for(mark, f"release {name} 1")
                assert app.presses(mark) == [f"press {name} 1 -"]
        finally:
            tool.close()
            app.stop()
