"""Reading an Xvfb screen straight from its shared-memory framebuffer file.

Started with ``-fbdir DIR``, Xvfb keeps screen 0 in ``DIR/Xvfb_screen0``: an XWD file
(a big-endian header, a colour table, then the pixel rows) that the server maps with
``MAP_SHARED`` and draws into. Mapping the same file gives us the live screen without
one X request or copy: a capture is a slice of that map handed to PIL.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from viewfinder.core.errors import CaptureError, CaptureNotSupportedError
from viewfinder.core.geometry import Region
from viewfinder.core.imaging import image_from_raw

# XWD header (X11/XWDFile.h): 25 CARD32 fields, big-endian, followed by the window name.
_HEADER = struct.Struct(">25I")
_XWD_VERSION = 7
_ZPIXMAP = 2
_LSB_FIRST = 0
#: Each colour table entry: pixel (4), red/green/blue (2 each), flags and pad (1 each).
_COLOR_ENTRY_SIZE = 12

#: PIL raw modes for the pixel layouts Xvfb writes, by bits per pixel (LSB-first servers).
_RAW_MODES = {32: "BGRX", 16: "BGR;16"}


@dataclass(frozen=True)
class XwdHeader:
    """The fields of an XWD header that locate and describe the pixels."""

    header_size: int
    version: int
    pixmap_format: int
    depth: int
    width: int
    height: int
    byte_order: int
    bits_per_pixel: int
    bytes_per_line: int
    ncolors: int

    @classmethod
    def parse(cls, data: bytes) -> XwdHeader:
        """Read the header at the start of ``data``; :class:`CaptureError` when it is not one."""
        if len(data) < _HEADER.size:
            raise CaptureError(
                f"framebuffer file is too short for an XWD header ({len(data)} bytes)"
            )
        fields = _HEADER.unpack_from(data)
        header = cls(
            header_size=fields[0],
            version=fields[1],
            pixmap_format=fields[2],
            depth=fields[3],
            width=fields[4],
            height=fields[5],
            byte_order=fields[7],
            bits_per_pixel=fields[11],
            bytes_per_line=fields[12],
            ncolors=fields[19],
        )
        if header.version != _XWD_VERSION or header.pixmap_format != _ZPIXMAP:
            raise CaptureError(
                f"framebuffer file is not an XWD ZPixmap (version {header.version}, "
                f"format {header.pixmap_format})"
            )
        return header

    @property
    def pixel_offset(self) -> int:
        """Where the first pixel row starts: after the header and the colour table."""
        return self.header_size + self.ncolors * _COLOR_ENTRY_SIZE

    @property
    def size(self) -> int:
        """Bytes the whole file needs."""
        return self.pixel_offset + self.bytes_per_line * self.height

    @property
    def raw_mode(self) -> str:
        """The PIL raw mode that reads these pixels into RGB."""
        mode = _RAW_MODES.get(self.bits_per_pixel)
        if mode is None or self.byte_order != _LSB_FIRST:
            raise CaptureNotSupportedError(
                f"cannot read a {self.bits_per_pixel}-bit, "
                f"{'MSB' if self.byte_order else 'LSB'}-first framebuffer; start the "
                "display with depth 24 (the default) or 16"
            )
        return mode


class Framebuffer:
    """A read-only map of one Xvfb framebuffer file, turned into images on demand.

    Open it once and keep it: each :meth:`image` call only slices the map. Safe to
    use from several threads.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        with open(self.path, "rb") as file:
            # the map keeps its own reference to the file; the descriptor can go
            self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        # A lock because close() must not pull the map from under a reader.
        self._lock = threading.Lock()
        try:
            self.header = XwdHeader.parse(self._map[: _HEADER.size])
            self._raw_mode = self.header.raw_mode
            if len(self._map) < self.header.size:
                raise CaptureError(
                    f"framebuffer {self.path} holds {len(self._map)} bytes, its header "
                    f"promises {self.header.size}"
                )
        except BaseException:
            self._map.close()
            raise

    @property
    def width(self) -> int:
        return self.header.width

    @property
    def height(self) -> int:
        return self.header.height

    def image(self, region: Region | None = None) -> Image.Image:
        """The screen (or ``region`` of it, which must lie on the screen) as an RGB image.

        A region is read from its first pixel onward with the screen's row stride, so a
        small region costs little however large the screen is.
        """
        header = self.header
        x, y, width, height = 0, 0, header.width, header.height
        if region is not None:
            region.check_within(header.width, header.height)
            x, y, width, height = region.x, region.y, region.width, region.height
        stride = header.bytes_per_line
        start = header.pixel_offset + y * stride + x * header.bits_per_pixel // 8
        end = start + (height - 1) * stride + width * header.bits_per_pixel // 8
        with self._lock:
            if self._map.closed:
                raise CaptureError(f"framebuffer {self.path} was closed")
            view = memoryview(self._map)[start:end]
            try:
                # PIL decodes into its own memory here, so the view can be let go at once
                return image_from_raw(view, width, height, self._raw_mode, stride=stride)
            finally:
                view.release()

    def close(self) -> None:
        """Unmap the file (idempotent)."""
        with self._lock:
            if not self._map.closed:
                self._map.close()

    def __enter__(self) -> Framebuffer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Framebuffer({str(self.path)!r}, {self.width}x{self.height})"
