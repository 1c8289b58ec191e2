"""Perceptual hashes (phash, ahash, dhash, whash) bit-identical to imagehash's, but fast.

A hash written by ``str(imagehash.phash(region, hash_size))`` anywhere validates here,
and the other way round: the steps are imagehash's (``convert("L")``, a LANCZOS resize,
then the method's arithmetic) and the hex string is formatted the same way. What
differs is the cost (measured in ``benchmarks/cache.py``):

* the resize runs as two cached matrix products (:mod:`viewfinder.cache.resample`),
  exactly reproducing Pillow's fixed-point arithmetic;
* phash's DCT is a precomputed cosine matrix instead of two ``scipy.fftpack.dct``
  calls. Floating-point results of the two differ in the last bits, which only matters
  for a coefficient within rounding distance of the median (flat regions, where many
  coefficients tie). Those regions fall back to scipy's DCT, the very call imagehash
  makes, so the bits are always the same;
* the median and the hex string avoid numpy/str overheads that dominate at 64 values.

scipy (for the fallback) and pywt (whash) take hundreds of milliseconds to import; a
:class:`RegionHasher` imports them when it is made, never during a step.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Literal, cast, get_args

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from viewfinder.cache.errors import HashSettingsError
from viewfinder.cache.resample import resize_grey
from viewfinder.core.geometry import Point, Region

HashMethod = Literal["phash", "ahash", "dhash", "whash"]
#: The hash methods, in the order the docs list them.
HASH_METHODS: tuple[HashMethod, ...] = get_args(HashMethod)
DEFAULT_HASH_SIZE = 8
DEFAULT_REGION_SIZE = 100
#: imagehash's phash resizes to ``hash_size * 4`` before the DCT.
_HIGHFREQ_FACTOR = 4
#: Bound on the relative rounding error of either DCT (≈ N² ulp, with a wide margin).
_DCT_RELATIVE_TOLERANCE = 1e-9


def check_method(method: str) -> HashMethod:
    """``method`` if it is a known hash method; :class:`HashSettingsError` otherwise."""
    if method not in HASH_METHODS:
        raise HashSettingsError(
            f"unknown hash method {method!r}; use one of: {', '.join(HASH_METHODS)}"
        )
    return method


def check_hash_size(method: str, hash_size: int) -> int:
    """``hash_size`` if ``method`` can use it (imagehash's own limits)."""
    if not isinstance(hash_size, int) or hash_size < 2:
        raise HashSettingsError(f"hash size must be an integer of at least 2, got {hash_size!r}")
    if method == "whash" and hash_size & (hash_size - 1):
        raise HashSettingsError(f"whash needs a power of two as hash size, got {hash_size}")
    return hash_size


def check_region_size(region_size: int) -> int:
    """``region_size`` if it is a positive number of pixels."""
    if not isinstance(region_size, int) or region_size <= 0:
        raise HashSettingsError(
            f"region size must be a positive number of pixels, got {region_size!r}"
        )
    return region_size


def hash_length(hash_size: int) -> int:
    """Hex digits in a hash of ``hash_size`` (``hash_size**2`` bits; 16 for size 8)."""
    return _hex_digits(hash_size * hash_size)


def _hex_digits(bits: int) -> int:
    return math.ceil(bits / 4)


def hamming_distance(first: str, second: str) -> int:
    """Number of bits in which two hex hashes of the same length differ."""
    if len(first) != len(second):
        raise HashSettingsError(
            f"cannot compare hashes of different lengths ({len(first)} and {len(second)} "
            "hex digits); they were made with different hash sizes"
        )
    try:
        return (int(first, 16) ^ int(second, 16)).bit_count()
    except ValueError as exc:
        raise HashSettingsError(f"hashes must be hexadecimal: {first!r}, {second!r}") from exc


def bits_to_hex(bits: NDArray[np.bool_]) -> str:
    """imagehash's ``str(ImageHash)``: the bits row by row, as zero-padded hex."""
    flat = bits.reshape(-1)
    packed = np.packbits(flat)
    value = int.from_bytes(packed.tobytes(), "big") >> (8 * packed.size - flat.size)
    return format(value, f"0{_hex_digits(flat.size)}x")


def _median(values: NDArray[np.float64]) -> float:
    # numpy.median's result (the mean of the two middle values) without its overhead
    ordered = np.sort(values, axis=None)
    middle = ordered.size // 2
    if ordered.size % 2:
        return float(ordered[middle])
    return float((ordered[middle - 1] + ordered[middle]) / 2)


@lru_cache(maxsize=32)
def _dct_rows(size: int, rows: int) -> NDArray[np.float64]:
    # scipy.fftpack.dct (type II, unnormalised): y[k] = 2 * sum x[n] cos(pi k (2n + 1) / 2N)
    k = np.arange(rows, dtype=np.float64)[:, None]
    n = np.arange(size, dtype=np.float64)[None, :]
    matrix = 2.0 * np.cos(np.pi * k * (2.0 * n + 1.0) / (2.0 * size))
    matrix.setflags(write=False)
    return matrix


class RegionHasher:
    """Hashes images (or greyscale arrays) with one method and hash size.

    Making one loads what the method needs (scipy for phash's fallback, pywt for whash)
    so that hashing a step never pays an import.
    """

    def __init__(self, method: str = "phash", hash_size: int = DEFAULT_HASH_SIZE) -> None:
        self.method: HashMethod = check_method(method)
        self.hash_size = check_hash_size(method, hash_size)
        self._fftpack: Any = None
        self._pywt: Any = None
        if self.method == "phash":
            import scipy.fftpack

            self._fftpack = scipy.fftpack
            _dct_rows(self.hash_size * _HIGHFREQ_FACTOR, self.hash_size)
        elif self.method == "whash":
            import pywt

            self._pywt = pywt

    def hash_image(self, image: Image.Image) -> str:
        """The hash of a whole PIL image, as ``str(imagehash.<method>(image, hash_size))``."""
        return self.hash_grey(np.asarray(image.convert("L")))

    def hash_region(self, image: Image.Image, region: Region | None) -> str:
        """The hash of ``region`` of ``image`` (the whole image when None)."""
        if region is not None:
            image = image.crop(region.box)
        return self.hash_image(image)

    def hash_grey(self, pixels: NDArray[np.uint8]) -> str:
        """The hash of a greyscale image given as a 2-D uint8 array."""
        size = self.hash_size
        if self.method == "ahash":
            small = resize_grey(pixels, size, size)
            return bits_to_hex(small > small.mean())
        if self.method == "dhash":
            small = resize_grey(pixels, size + 1, size)
            return bits_to_hex(small[:, 1:] > small[:, :-1])
        if self.method == "whash":
            return bits_to_hex(self._whash_bits(pixels))
        return bits_to_hex(self._phash_bits(pixels))

    def _phash_bits(self, pixels: NDArray[np.uint8]) -> NDArray[np.bool_]:
        size = self.hash_size
        side = size * _HIGHFREQ_FACTOR
        small = resize_grey(pixels, side, side)
        rows = _dct_rows(side, size)
        low = rows @ small.astype(np.float64) @ rows.T
        median = _median(low)
        # Pixels are >= 0, so the DC coefficient bounds every term of every coefficient.
        tolerance = _DCT_RELATIVE_TOLERANCE * abs(float(low[0, 0]))
        if np.abs(low - median).min() > tolerance:
            return low > median
        # A near-tie with the median: only imagehash's own DCT decides it identically.
        fft = self._fftpack
        dct = fft.dct(fft.dct(small, axis=0), axis=1)[:size, :size]
        return cast(NDArray[np.bool_], dct > np.median(dct))

    def _whash_bits(self, pixels: NDArray[np.uint8]) -> NDArray[np.bool_]:
        # imagehash.whash with its defaults (mode "haar", remove_max_haar_ll=True)
        pywt = self._pywt
        size = self.hash_size
        height, width = pixels.shape
        image_scale = max(2 ** int(np.log2(min(width, height))), size)
        ll_max_level = int(np.log2(image_scale))
        dwt_level = ll_max_level - int(np.log2(size))
        values = resize_grey(pixels, image_scale, image_scale) / 255.0
        coeffs = list(pywt.wavedec2(values, "haar", level=ll_max_level))
        coeffs[0] *= 0
        values = pywt.waverec2(coeffs, "haar")
        low = pywt.wavedec2(values, "haar", level=dwt_level)[0]
        return cast(NDArray[np.bool_], low > np.median(low))


@lru_cache(maxsize=16)
def hasher(method: str = "phash", hash_size: int = DEFAULT_HASH_SIZE) -> RegionHasher:
    """A shared, warmed :class:`RegionHasher` for ``method`` and ``hash_size``."""
    return RegionHasher(method, hash_size)


def region_around(
    point: Point | None, region_size: int, screen_width: int, screen_height: int
) -> Region | None:
    """The square of ``region_size`` centred on ``point``, clipped to the screen.

    None (the whole frame) for an action without a point. A point off the screen is a
    :class:`~viewfinder.core.RegionError`.
    """
    if point is None:
        return None
    return Region.around(point, check_region_size(region_size), screen_width, screen_height)


def image_hash(
    image: Image.Image,
    method: str = "phash",
    hash_size: int = DEFAULT_HASH_SIZE,
    region: Region | None = None,
) -> str:
    """The ``method`` hash of ``region`` of ``image`` (all of it when None)."""
    return hasher(method, hash_size).hash_region(image, region)
