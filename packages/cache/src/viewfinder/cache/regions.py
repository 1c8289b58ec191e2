"""What a step's check looks at besides the hash: masks over changing text, and colour.

- **Masks.** A region that shows text typed from a ``{{parameter}}`` shows other text on a
  replay with another value. Where a parameterised ``type`` step changed the screen
  (the typed area, measured between the frame before it and the frame after it, widened
  to the right edge because another value may be longer) is painted one flat grey in the
  recorded and in the live region alike before hashing, so the check sees everything but
  the substituted text.
- **Colour.** Perceptual hashes work on brightness only: a blue button turned red hashes
  the same. Each check also compares the mean colour of the region's four quarters; a
  difference over :data:`COLOUR_TOLERANCE` in any channel of any quarter is a mismatch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from PIL import Image

from viewfinder.core.geometry import Point, Region

#: The flat grey masked pixels are painted with.
MASK_GREY = (128, 128, 128)
#: Quarters of the region whose mean colours are compared (2 x 2).
COLOUR_GRID = 2
#: Largest accepted difference of one channel of one quarter's mean colour (0-255). A
#: mouse pointer over a quarter moves its mean by ~15; a recoloured button by 100+.
COLOUR_TOLERANCE = 48
#: Rows added above and below a typed area (anti-aliasing, descenders).
_TYPED_MARGIN = 3


def typed_area(before: Image.Image, after: Image.Image, origin: Point) -> Region | None:
    """Where ``after`` differs from ``before``, widened to the right edge; screen coordinates.

    None when the frames do not differ or cannot be compared (different sizes).
    """
    if before.size != after.size:
        return None
    first = np.asarray(before.convert("RGB"), dtype=np.int16)
    second = np.asarray(after.convert("RGB"), dtype=np.int16)
    changed = np.any(first != second, axis=2)
    rows = np.flatnonzero(changed.any(axis=1))
    cols = np.flatnonzero(changed.any(axis=0))
    if rows.size == 0:
        return None
    width, height = before.size
    top = max(0, int(rows[0]) - _TYPED_MARGIN)
    bottom = min(height, int(rows[-1]) + 1 + _TYPED_MARGIN)
    left = int(cols[0])
    return Region(x=origin.x + left, y=origin.y + top, width=width - left, height=bottom - top)


def masks_in(region: Region, masks: Iterable[Region]) -> list[Region]:
    """The parts of ``masks`` inside ``region``, relative to its top-left corner."""
    inside = []
    for mask in masks:
        left, top = max(region.x, mask.x), max(region.y, mask.y)
        right = min(region.x + region.width, mask.x + mask.width)
        bottom = min(region.y + region.height, mask.y + mask.height)
        if right > left and bottom > top:
            inside.append(
                Region(x=left - region.x, y=top - region.y, width=right - left, height=bottom - top)
            )
    return inside


def apply_masks(image: Image.Image, masks: Sequence[Region]) -> Image.Image:
    """A copy of ``image`` with each mask (image coordinates) painted flat grey."""
    if not masks:
        return image
    painted = image.convert("RGB")
    painted = painted.copy() if painted is image else painted
    for mask in masks:
        painted.paste(MASK_GREY, mask.box)
    return painted


def colour_signature(image: Image.Image) -> str:
    """The mean colour of each quarter of ``image``, as hex (``rrggbb`` four times)."""
    pixels = np.asarray(image.convert("RGB"), dtype=np.float64)
    height, width = pixels.shape[:2]
    cells: list[int] = []
    for row in range(COLOUR_GRID):
        for col in range(COLOUR_GRID):
            y0, y1 = height * row // COLOUR_GRID, max(height * (row + 1) // COLOUR_GRID, 1)
            x0, x1 = width * col // COLOUR_GRID, max(width * (col + 1) // COLOUR_GRID, 1)
            cell = pixels[y0:y1, x0:x1].reshape(-1, 3)
            cells.extend(round(float(value)) for value in cell.mean(axis=0))
    return bytes(cells).hex()


def colour_distance(first: str, second: str) -> int:
    """The largest channel difference between two colour signatures (0-255)."""
    a, b = bytes.fromhex(first), bytes.fromhex(second)
    if len(a) != len(b):
        raise ValueError(f"colour signatures differ in length ({len(a)} and {len(b)} bytes)")
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0)


def signature_length() -> int:
    """Hex digits in a colour signature."""
    return COLOUR_GRID * COLOUR_GRID * 3 * 2
