"""A screenshot drawn in the terminal with half blocks: two pixels per character cell.

Each cell shows ``▀`` with the upper pixel as the foreground colour and the lower pixel
as the background colour, so a ``W`` x ``H`` cell preview shows ``W`` x ``2H`` pixels.
Works in any terminal with true colour; no image protocol needed.
"""

from __future__ import annotations

from PIL import Image
from rich.color import Color
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style

UPPER_HALF = "\u2580"
RGB = tuple[int, int, int]


def _rgb(pixel: object) -> RGB:
    red, green, blue = pixel[:3]  # type: ignore[index]
    return (int(red), int(green), int(blue))


def fit_size(image_size: tuple[int, int], max_cells: tuple[int, int]) -> tuple[int, int]:
    """Cells (columns, rows) showing ``image_size`` pixels within ``max_cells``, aspect kept.

    A cell is about twice as tall as wide and holds two pixels vertically, so one pixel
    per column and two per row keep the picture's proportions.
    """
    width, height = image_size
    max_columns, max_rows = max_cells
    scale = min(max_columns / width, (2 * max_rows) / height)
    columns = max(1, min(max_columns, round(width * scale)))
    rows = max(1, min(max_rows, round(height * scale / 2)))
    return columns, rows


class HalfBlockImage:
    """A Rich renderable of ``image`` in at most ``max_width`` x ``max_height`` cells."""

    def __init__(self, image: Image.Image, max_width: int = 40, max_height: int = 12) -> None:
        self.columns, self.rows = fit_size(image.size, (max_width, max_height))
        small = image.convert("RGB").resize((self.columns, 2 * self.rows), Image.Resampling.BOX)
        self.pixels = small.load()
        self._lines = [self._line(row) for row in range(self.rows)]

    def _line(self, row: int) -> list[Segment]:
        segments = []
        pixels = self.pixels
        assert pixels is not None
        for column in range(self.columns):
            top, bottom = _rgb(pixels[column, 2 * row]), _rgb(pixels[column, 2 * row + 1])
            style = Style(color=Color.from_rgb(*top), bgcolor=Color.from_rgb(*bottom))
            segments.append(Segment(UPPER_HALF, style))
        return list(Segment.simplify(segments))

    def cell_colors(self, column: int, row: int) -> tuple[RGB, RGB]:
        """The (upper, lower) RGB colours shown in one cell."""
        pixels = self.pixels
        assert pixels is not None
        top, bottom = pixels[column, 2 * row], pixels[column, 2 * row + 1]
        return _rgb(top), _rgb(bottom)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self._lines:
            yield from line
            yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.columns, self.columns)
