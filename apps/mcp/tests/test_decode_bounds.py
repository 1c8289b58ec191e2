"""A session's images are sized from their headers before the server decodes them.

Code in a session builds a 12000x12000 PNG (144 megapixels in about 420 KB: rows of
black compress a thousandfold) and hands it back with ``attach_image()``, or writes it
on the result pipe as a capture frame of its own making. Either is refused with the
limit named, nothing of it decoded, and the server's peak memory (VmHWM of its
process) stays bounded. A ``video`` frame without ``fps``, sent while a recording
runs, ends the step with a clear error and leaves no ffmpeg running.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from viewfinder.mcp.testing import StdioServer, text_of

#: Builds ``png``: a 12000x12000 RGB PNG of black rows, streamed through zlib.
HUGE_PNG = """
import struct, zlib
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
side = 12000
packer = zlib.compressobj(9)
row = bytes(1 + 3 * side)
idat = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
head = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", head) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
print("png bytes", len(png))
"""
#: Writes ``png`` on the result pipe as a capture frame that says ``size``.
FORGED = """
screen = attach_image.__self__
screen._send({"type": "capture", "step": screen.step, "index": 0, "width": SIZE,
              "height": SIZE, "attached": True}, png)
print("sent")
"""
#: Starts a real recording, then sends a video request without its fps.
BROKEN_VIDEO = """
import time
start_recording()
recordings = start_recording.__self__
recordings._send({"type": "video", "id": 99, "step": recordings.step, "op": "start"}, b"")
time.sleep(5)
print("not ended")
"""


def _peak_mib(pid: int) -> float:
    """The peak resident memory of process ``pid`` so far (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def test_a_144_megapixel_image_is_refused_from_its_header(
    stdio_server: Callable[..., StdioServer],
) -> None:
    server = stdio_server("--size", "640x480")
    warm = server.call("run_code", {"code": "print('ready')"})
    assert not warm.is_error, text_of(warm)
    before = _peak_mib(server.pid)

    attached = server.call("run_code", {"code": HUGE_PNG + "attach_image(png)"})
    text = text_of(attached)
    assert attached.is_error and "ImageTooLargeError" in text, text
    assert "12000x12000 (144 MP), over the 40 MP limit" in text, text

    forged = server.call("run_code", {"code": HUGE_PNG + FORGED.replace("SIZE", "12000")})
    text = text_of(forged)
    assert forged.is_error and "12000x12000 (144 MP), over the 40 MP limit" in text, text
    assert "the worker was stopped" in text, text

    lying = server.call("run_code", {"code": HUGE_PNG + FORGED.replace("SIZE", "100")})
    text = text_of(lying)
    assert lying.is_error and "says it is 100x100 but its data holds 12000x12000" in text

    after = _peak_mib(server.pid)
    print(f"server peak RSS: {before:.0f} MiB before, {after:.0f} MiB after the 144 MP images")
    # decoding one would take over 400 MiB (432 MB of RGB pixels) on top of the server
    assert after - before < 100, (before, after)
    assert not server.call("run_code", {"code": "print('still serving')"}).is_error


def test_a_video_frame_without_fps_ends_the_step_and_its_recordings(
    stdio_server: Callable[..., StdioServer],
) -> None:
    server = stdio_server("--size", "640x480")
    result = server.call("run_code", {"code": BROKEN_VIDEO})
    text = text_of(result)
    assert result.is_error and "fps=None" in text and "the worker was stopped" in text, text
    assert "not ended" not in text
    left = [name for name in server.processes().values() if name == "ffmpeg"]
    assert not left, f"recorders left running: {left}"
    again = server.call("run_code", {"code": "print('still serving')"})
    assert not again.is_error and "still serving" in text_of(again)
