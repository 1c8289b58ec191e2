"""A complete third-party capture backend in one file: a colour-bar test card.

Install it next to viewfinder (``pip install ./examples/plugin-testcard``) and
``viewfinder backends`` lists ``testcard``; ``viewfinder capture --backend testcard``
writes the card.
"""

from __future__ import annotations

from typing import Any

from PIL import Image, ImageDraw

from viewfinder.core import (
    Availability,
    CaptureBackend,
    CaptureNotSupportedError,
    Region,
    Screenshot,
    hookimpl,
)
from viewfinder.core.imaging import ImageFormat

#: The eight bars, left to right.
BARS = [
    (255, 255, 255),
    (255, 255, 0),
    (0, 255, 255),
    (0, 255, 0),
    (255, 0, 255),
    (255, 0, 0),
    (0, 0, 255),
    (0, 0, 0),
]


class ColourBarsBackend(CaptureBackend):
    """Draws eight vertical colour bars of equal width."""

    name = "testcard"
    priority = -1  # never picked as "best available"; only when asked for by name

    def __init__(self, width: int = 800, height: int = 600, **_: Any) -> None:
        self.width, self.height = int(width), int(height)

    @classmethod
    def availability(cls, **options: Any) -> Availability:
        return Availability.yes("draws in memory; needs nothing")

    def screen_size(self) -> tuple[int, int]:
        return (self.width, self.height)

    def _capture(
        self,
        *,
        region: Region | None,
        window: int | None,
        format: ImageFormat,
        quality: int | None,
    ) -> Screenshot:
        if window is not None:
            raise CaptureNotSupportedError("a test card has no windows")
        card = Image.new("RGB", (self.width, self.height))
        draw = ImageDraw.Draw(card)
        bar = self.width / len(BARS)
        for index, colour in enumerate(BARS):
            draw.rectangle(
                (round(index * bar), 0, round((index + 1) * bar) - 1, self.height), colour
            )
        if region is not None:
            region.check_within(self.width, self.height)
            card = card.crop(region.box)
        return Screenshot.from_image(
            card, source=self.name, format=format, region=region, quality=quality
        )


@hookimpl
def viewfinder_register_capture_backends(register):  # type: ignore[no-untyped-def]
    register("testcard", ColourBarsBackend)
