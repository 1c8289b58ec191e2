"""Pillow's LANCZOS downscale of a greyscale image, exactly, as two cached matrix products.

Every imagehash hash starts with ``image.convert("L").resize(size, LANCZOS)``, and at
the 100 px regions replay checks that resize is most of the cost of a hash. Pillow
recomputes its filter coefficients on every call; here they are computed once per
(input size, output size) and kept, and each pass is one float64 matrix product.

The result is bit-identical to Pillow's, not merely close: Pillow works in fixed point
(coefficients scaled by 2**22 and rounded to integers, each pass rounded and clipped to
0..255), and every product and partial sum of those integers is an integer below 2**53,
so float64 arithmetic computes them exactly in any order. The coefficients are computed
in Python with the same double-precision operations, in the same order, as Pillow's
``Resample.c`` (``precompute_coeffs`` and ``normalize_coeffs_8bpc``). Tests compare the
two on many images and sizes.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray
from PIL import Image

#: Pillow's fixed-point precision for 8-bit images (``32 - 8 - 2``).
PRECISION_BITS = 22
_LANCZOS_SUPPORT = 3.0
_HALF = float(1 << (PRECISION_BITS - 1))
_ONE = float(1 << PRECISION_BITS)


def _sinc(x: float) -> float:
    if x == 0.0:
        return 1.0
    x = x * math.pi
    return math.sin(x) / x


def _lanczos(x: float) -> float:
    if -3.0 <= x < 3.0:
        return _sinc(x) * _sinc(x / 3)
    return 0.0


@lru_cache(maxsize=512)
def lanczos_weights(in_size: int, out_size: int) -> NDArray[np.float64]:
    """The ``(out_size, in_size)`` matrix of Pillow's fixed-point LANCZOS coefficients."""
    scale = in_size / out_size
    filterscale = max(scale, 1.0)
    support = _LANCZOS_SUPPORT * filterscale
    inverse = 1.0 / filterscale
    weights = np.zeros((out_size, in_size), dtype=np.float64)
    for out in range(out_size):
        center = 0.0 + (out + 0.5) * scale
        first = max(int(center - support + 0.5), 0)
        count = min(int(center + support + 0.5), in_size) - first
        taps = [_lanczos((x + first - center + 0.5) * inverse) for x in range(count)]
        total = 0.0
        for tap in taps:
            total += tap
        for x, tap in enumerate(taps):
            if total != 0.0:
                tap /= total
            weights[out, first + x] = int(-0.5 + tap * _ONE) if tap < 0 else int(0.5 + tap * _ONE)
    weights.setflags(write=False)
    return weights


@lru_cache(maxsize=512)
def _transposed(in_size: int, out_size: int) -> NDArray[np.float64]:
    # contiguous, so the horizontal pass's product runs at full speed
    weights = np.ascontiguousarray(lanczos_weights(in_size, out_size).T)
    weights.setflags(write=False)
    return weights


def _round_clip(sums: NDArray[np.float64]) -> NDArray[np.float64]:
    # Pillow: clip8((1 << 21) + sum) == clamp((sum + 2**21) >> 22, 0, 255); in place.
    sums += _HALF
    sums *= 1.0 / _ONE  # a power of two: exact
    np.floor(sums, out=sums)
    return np.clip(sums, 0.0, 255.0, out=sums)


def resize_grey(pixels: NDArray[np.uint8], width: int, height: int) -> NDArray[np.uint8]:
    """``Image.fromarray(pixels).resize((width, height), LANCZOS)`` as a uint8 array."""
    in_height, in_width = pixels.shape
    if (in_width, in_height) == (width, height):
        return pixels
    if in_height > in_width * 100 and height < in_height:
        # Pillow resizes such very tall images in another order; leave those to it.
        image = Image.fromarray(pixels).resize((width, height), Image.Resampling.LANCZOS)
        return np.asarray(image)
    values = pixels.astype(np.float64)
    if width != in_width:
        values = _round_clip(values @ _transposed(in_width, width))
    if height != in_height:
        values = _round_clip(lanczos_weights(in_height, height) @ values)
    return values.astype(np.uint8)
