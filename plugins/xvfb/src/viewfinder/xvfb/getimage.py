"""Grabbing pixels over the X protocol (GetImage), for displays without a framebuffer file.

A display somebody else started (a real X server, an Xvfb without ``-fbdir``) has no
file to map, so its pixels travel through the X connection instead. Slower than the
shared-memory path, but it works on any X server.
"""

from __future__ import annotations

import Xlib.display
from PIL import Image
from Xlib import X

from viewfinder.core.errors import CaptureNotSupportedError
from viewfinder.core.geometry import Region
from viewfinder.core.imaging import image_from_raw

_ALL_PLANES = 0xFFFFFFFF
_RAW_MODES = {32: "BGRX", 16: "BGR;16"}


def screen_size(conn: Xlib.display.Display) -> tuple[int, int]:
    screen = conn.screen()
    return (screen.width_in_pixels, screen.height_in_pixels)


def grab(conn: Xlib.display.Display, region: Region | None = None) -> Image.Image:
    """The root window (or ``region`` of it) as an RGB image, read with GetImage."""
    width, height = screen_size(conn)
    x, y = 0, 0
    if region is not None:
        region.check_within(width, height)
        x, y, width, height = region.x, region.y, region.width, region.height
    reply = conn.screen().root.get_image(x, y, width, height, X.ZPixmap, _ALL_PLANES)
    data: bytes = reply.data
    bits = _bits_per_pixel(conn, reply.depth)
    mode = _RAW_MODES.get(bits)
    if mode is None or conn.display.info.image_byte_order != X.LSBFirst:
        raise CaptureNotSupportedError(
            f"cannot read {bits}-bit pixels in this X server's byte order; use a depth-24 display"
        )
    # rows are padded to the server's scanline pad: derive the stride from the data
    stride = len(data) // height
    return image_from_raw(data, width, height, mode, stride=stride)


def _bits_per_pixel(conn: Xlib.display.Display, depth: int) -> int:
    for pixmap_format in conn.display.info.pixmap_formats:
        if pixmap_format.depth == depth:
            return int(pixmap_format.bits_per_pixel)
    return 32 if depth > 16 else 16
