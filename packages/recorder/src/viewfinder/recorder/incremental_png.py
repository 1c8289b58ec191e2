"""PNG encoding of a live frame that re-compresses only the rows that changed.

The live frame is encoded whenever the screen changes, and on most changes (a clock, a
caret, a typed word) only a few rows differ. This encoder cuts the frame into bands of
rows and deflates each band on its own: every band but the last ends with a full flush
(byte-aligned, no reference to earlier data), so the bands' outputs concatenate into one
valid zlib stream. It keeps each band's pixels, output and Adler-32, and on the next
frame deflates again only the bands whose pixels differ; the stream's Adler-32 is
combined from the bands' without reading them again.

Rows are written unfiltered (PNG filter type 0), as mss does: on screen content
(flat fills, text, sharp edges) that compresses as well as adaptive filtering and costs
nothing to choose. benchmarks/recorder.py measures what this saves.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from PIL import Image

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ZLIB_HEADER = b"\x78\x01"  # deflate, 32 KiB window, "fastest" level hint
_ADLER_BASE = 65521


def adler32_combine(first: int, second: int, second_length: int) -> int:
    """The Adler-32 of two byte strings joined, from each one's (zlib's adler32_combine)."""
    remainder = second_length % _ADLER_BASE
    sum1 = first & 0xFFFF
    sum2 = (remainder * sum1) % _ADLER_BASE
    sum1 += (second & 0xFFFF) + _ADLER_BASE - 1
    sum2 += ((first >> 16) & 0xFFFF) + ((second >> 16) & 0xFFFF) + _ADLER_BASE - remainder
    sum1 %= _ADLER_BASE
    sum2 %= _ADLER_BASE
    return sum1 | (sum2 << 16)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


@dataclass
class _Band:
    pixels: bytes
    deflated: bytes
    adler: int
    length: int


class IncrementalPngEncoder:
    """Encodes successive frames; returns None for a frame identical to the previous one.

    Not thread-safe: one encoder belongs to one frame updater.
    """

    def __init__(self, band_rows: int = 32, level: int = 1) -> None:
        if band_rows < 1:
            raise ValueError("band_rows must be at least 1")
        self.band_rows = band_rows
        self.level = level
        self._size: tuple[int, int] | None = None
        self._bands: list[_Band] = []
        #: Bands deflated by the last encode() (all of them for a first frame, 0 if unchanged).
        self.last_deflated = 0

    def encode(self, image: Image.Image) -> bytes | None:
        """The PNG of ``image``, or None when its pixels equal the previous frame's."""
        if image.mode != "RGB":
            image = image.convert("RGB")
        width, height = image.size
        if self._size != (width, height):
            self._size, self._bands = (width, height), []
        raw = image.tobytes()
        stride = width * 3
        step = stride * self.band_rows
        count = (height + self.band_rows - 1) // self.band_rows
        changed = 0
        for index in range(count):
            start = index * step
            # startswith compares in place: no copy of an unchanged band
            if index < len(self._bands) and raw.startswith(self._bands[index].pixels, start):
                continue
            band = self._deflate(raw[start : start + step], stride, last=index == count - 1)
            if index < len(self._bands):
                self._bands[index] = band
            else:
                self._bands.append(band)
            changed += 1
        self.last_deflated = changed
        if not changed:
            return None
        return self._assemble(width, height)

    def _deflate(self, pixels: bytes, stride: int, *, last: bool) -> _Band:
        rows = [pixels[offset : offset + stride] for offset in range(0, len(pixels), stride)]
        lines = b"\0" + b"\0".join(rows)  # filter type 0 before every row
        compressor = zlib.compressobj(self.level, zlib.DEFLATED, -15)
        deflated = compressor.compress(lines) + compressor.flush(
            zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH
        )
        return _Band(pixels, deflated, zlib.adler32(lines), len(lines))

    def _assemble(self, width: int, height: int) -> bytes:
        adler = 1  # the Adler-32 of nothing
        for band in self._bands:
            adler = adler32_combine(adler, band.adler, band.length)
        stream = b"".join(
            [_ZLIB_HEADER, *(band.deflated for band in self._bands), struct.pack(">I", adler)]
        )
        header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
        return b"".join(
            [_SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", stream), _chunk(b"IEND", b"")]
        )
