"""Decodes are bounded from the header: a 144-megapixel PNG of 420 KB is refused, with
the limit named, before a pixel of it is decoded."""

from __future__ import annotations

import resource
import struct
import zlib

import pytest

from viewfinder.core import imaging
from viewfinder.core.result_budget import fit_image, fit_result
from viewfinder.core.screenshot import Screenshot
from viewfinder.core.tools import ImageContent, TextContent, ToolResult


def _black_png(side: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    packer = zlib.compressobj(9)
    row = bytes(1 + 3 * side)
    idat = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def huge() -> Screenshot:
    data = _black_png(12000)
    assert len(data) < 500_000
    return Screenshot(data=data, format="png", width=12000, height=12000, source="test")


def test_decode_refuses_past_the_limit_and_says_it(huge: Screenshot) -> None:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(imaging.ImageTooLargeError, match=r"12000x12000 \(144 MP\), over the 40 MP"):
        huge.to_pil()
    with pytest.raises(imaging.ImageTooLargeError):
        fit_image(huge)
    # nothing was decoded: 144 MP of RGB is 432 MB
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 100 * 1024


def test_a_size_that_is_not_the_images_own_is_refused(huge: Screenshot) -> None:
    lying = huge.model_copy(update={"width": 100, "height": 100})
    with pytest.raises(imaging.ScreenshotDecodeError, match="says it is 100x100 but its data"):
        fit_image(lying)


def test_a_result_leaves_the_image_out_with_the_reason(huge: Screenshot) -> None:
    fitted = fit_result(ToolResult(content=[ImageContent(image=huge)]))
    assert not any(isinstance(part, ImageContent) for part in fitted.content)
    (note,) = [part.text for part in fitted.content if isinstance(part, TextContent)]
    assert "the image was left out: the image is 12000x12000 (144 MP)" in note
