from __future__ import annotations

import random
import shutil
import struct
import subprocess
import threading
import zlib
from pathlib import Path

import deflate
import pytest
from PIL import Image, ImageDraw

from viewfinder.core import ScreenshotDecodeError, _deflate_parts, imaging


def test_encode_raw_reads_bgrx_rows_with_stride() -> None:
    # two pixels per row, plus 4 bytes of padding per row: stride 12
    row = bytes([255, 0, 0, 0, 0, 0, 255, 0]) + b"\x00" * 4  # blue, red (BGRX)
    image = imaging.image_from_raw(row * 3, 2, 3, "BGRX", stride=12)
    assert image.getpixel((0, 2)) == (0, 0, 255)
    assert image.getpixel((1, 2)) == (255, 0, 0)


@pytest.mark.parametrize("fmt", ["png", "jpeg", "webp", "JPG", ".PNG"])
def test_encode_formats(fmt: str) -> None:
    data = imaging.encode(Image.new("RGB", (8, 8), "green"), fmt)
    assert imaging.sniff_format(data) == imaging.normalize_format(fmt)


def test_unknown_format_says_which_are_supported() -> None:
    with pytest.raises(ValueError, match="png, jpeg, webp"):
        imaging.normalize_format("gif")


def test_decode_garbage() -> None:
    with pytest.raises(ScreenshotDecodeError):
        imaging.decode(b"\x89PNG\r\n\x1a\ntruncated")


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "P", "1"])
def test_png_round_trips_every_mode_exactly(mode: str) -> None:
    source = Image.new("RGB", (37, 23), (10, 200, 30))
    source.paste((250, 0, 128), (5, 5, 20, 15))
    image = source.convert(mode)
    data = imaging.encode_png(image)
    decoded = imaging.decode(data)
    expected = image if mode in ("RGB", "RGBA", "L") else image.convert("RGB")
    assert decoded.mode == expected.mode
    assert decoded.tobytes() == expected.tobytes()


def test_png_levels_trade_size_for_time() -> None:
    image = Image.effect_noise((64, 64), 40).convert("RGB")
    sizes = [len(imaging.encode_png(image, level)) for level in (1, 12)]
    assert sizes[1] <= sizes[0]


def test_image_size_reads_the_header_only() -> None:
    data = imaging.encode(Image.new("RGB", (31, 17), "red"), "webp")
    assert imaging.image_size(data) == (31, 17)
    with pytest.raises(ScreenshotDecodeError, match="header could not be read"):
        imaging.image_size(b"not an image")


# --- parallel deflate -------------------------------------------------------------------


def screen_like(width: int, height: int) -> Image.Image:
    """Flat fills, sharp edges and a noisy patch: blocks of every kind for the deflater."""
    image = Image.new("RGB", (width, height), (240, 240, 240))
    draw = ImageDraw.Draw(image)
    for index in range(0, height, 23):
        draw.rectangle((5, index, width // 2, index + 11), fill=(index % 256, 40, 200))
        draw.text((width // 2 + 10, index), f"line {index} of the frame", fill="black")
    image.paste(Image.effect_noise((width // 4, height // 3), 90).convert("RGB"), (0, 0))
    return image


def idat_stream(png: bytes) -> bytes:
    """The zlib stream of a PNG (all IDAT chunks joined)."""
    at, stream = 8, b""
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        if png[at + 4 : at + 8] == b"IDAT":
            stream += png[at + 8 : at + 8 + length]
        at += 12 + length
    return stream


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize("level", [0, 1, 7, 12])
def test_png_deflated_in_parts_round_trips_exactly(threads: int, level: int) -> None:
    image = screen_like(640, 400)  # 768 KB of rows: above the one-thread threshold
    assert imaging.PNG_PARALLEL_MIN_BYTES <= 640 * 3 * 400
    data = imaging.encode_png(image, level, threads=threads)
    # zlib checks the whole stream, its end and its Adler-32; Pillow the pixels
    rows = zlib.decompress(idat_stream(data))
    assert len(rows) == 400 * (640 * 3 + 1)
    assert imaging.decode(data).tobytes() == image.tobytes()
    # it really was cut into parts: one thread writes other bytes for the same pixels
    assert data != imaging.encode_png(image, level, threads=1)


def test_png_in_parts_reads_back_exactly_in_libpng(tmp_path: Path) -> None:
    """Another decoder than zlib's and Pillow's: ImageMagick's, through libpng."""
    image = screen_like(900, 500)
    path = tmp_path / "parts.png"
    path.write_bytes(imaging.encode_png(image, threads=3))
    # ImageMagick's `stream` writes the decoded pixels as raw RGB bytes
    stream = shutil.which("stream")
    assert stream, "ImageMagick is missing; `make setup` installs it"
    decoded = subprocess.run(
        [stream, "-map", "rgb", "-storage-type", "char", str(path), "-"],
        capture_output=True,
        check=True,
    ).stdout
    assert decoded == image.tobytes()


def test_png_in_parts_is_about_the_size_of_one_stream() -> None:
    image = screen_like(800, 600)
    whole = len(imaging.encode_png(image, threads=1))
    parts = len(imaging.encode_png(image, threads=2))
    assert abs(parts - whole) / whole < 0.01


def test_small_images_and_one_thread_are_one_stream() -> None:
    small = screen_like(64, 64)
    assert imaging.encode_png(small, threads=4) == imaging.encode_png(small, threads=1)
    with pytest.raises(ValueError, match="at least 1"):
        imaging.encode_png(small, threads=0)
    assert 1 <= imaging.png_threads() <= imaging.PNG_MAX_THREADS


def test_png_without_threads_to_spare_deflates_on_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process at its thread limit (the code env's sandbox) still gets its PNG."""
    image = screen_like(640, 400)

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    data = imaging.encode_png(image, threads=2)
    assert imaging.decode(data).tobytes() == image.tobytes()


def test_png_part_failure_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(stream: bytearray) -> bytearray:
        raise MemoryError("no room for the part")

    monkeypatch.setattr(_deflate_parts, "make_continuable", broken)
    with pytest.raises(MemoryError, match="no room"):
        imaging.encode_png(screen_like(640, 400), threads=2)


def test_png_without_the_zlib_library_uses_one_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    image = screen_like(640, 400)
    monkeypatch.setattr(_deflate_parts, "available", lambda: False)
    assert imaging.encode_png(image, threads=2) == imaging.encode_png(image, threads=1)


def deflate_inputs() -> list[bytes]:
    """Inputs whose raw deflate streams end at every bit position of their last byte."""
    rng = random.Random(7)
    words = [b"click", b"type", b"scroll", b"\x00" * 40, bytes(range(256))]
    inputs = [b"", b"a", bytes(70_000), rng.randbytes(70_000)]  # stored blocks too
    for size in range(1, 400):
        inputs.append(b" ".join(rng.choice(words) for _ in range(size)))
    return inputs


@pytest.mark.parametrize("level", [0, 1, 6, 12])
def test_continuable_streams_join_at_every_bit_alignment(level: int) -> None:
    follower = deflate.deflate_compress(b"and then the rest", level)
    alignments = set()
    for data in deflate_inputs():
        stream = deflate.deflate_compress(data, level)
        alignments.add(_deflate_parts._last_block_bounds(stream)[1] % 8)
        joined = bytes(_deflate_parts.make_continuable(stream) + follower)
        assert zlib.decompress(joined, wbits=-15) == data + b"and then the rest"
        # padding after the end may hold ones: other encoders need not write zeros
        stream = deflate.deflate_compress(data, level)
        end = _deflate_parts._last_block_bounds(stream)[1]
        if end % 8:
            stream[-1] |= 0xFF << (end % 8) & 0xFF
            assert zlib.decompress(bytes(stream), wbits=-15) == data
            joined = bytes(_deflate_parts.make_continuable(stream) + follower)
            assert zlib.decompress(joined, wbits=-15) == data + b"and then the rest"
        # joining twice in a row works too
        again = _deflate_parts.make_continuable(deflate.deflate_compress(data, level))
        assert zlib.decompress(bytes(again + again + follower), wbits=-15) == (
            data + data + b"and then the rest"
        )
    if level:  # stored blocks (level 0) always end on a byte boundary
        assert alignments == set(range(8))


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        (bytearray(), "empty"),
        (bytearray(b"\xff\xff\xff\xff"), "not one complete raw deflate stream"),
        (deflate.deflate_compress(b"some text " * 500, 6)[:-5], "truncated"),
    ],
)
def test_continuable_refuses_what_is_not_a_whole_stream(stream: bytearray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _deflate_parts.make_continuable(stream)
