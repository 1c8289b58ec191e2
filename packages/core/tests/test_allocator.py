"""Frame buffers are reused by the next frame instead of being faulted in afresh.

Counted in page faults (the kernel's own accounting), not in time: a process encoding
the same 1920x1080 frame twenty times faults in far fewer pages with the tuning.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

ENCODE_TWENTY_FRAMES = textwrap.dedent(
    """
    import json, os, resource
    from PIL import Image
    from viewfinder.core import _allocator, imaging
    frame = Image.frombytes("RGB", (1920, 1080), os.urandom(1920 * 1080 * 3))
    imaging.encode_png(frame, level=1)  # warm: imports, first allocations
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        imaging.encode_png(frame, level=1)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    print(json.dumps({"faults": after - before, "tuned": _allocator.keep_frame_buffers()}))
    """
)


def _run(tuning: str) -> dict[str, object]:
    env = {**os.environ, "VIEWFINDER_MALLOC_TUNING": tuning}
    out = subprocess.run(
        [sys.executable, "-c", ENCODE_TWENTY_FRAMES],
        env=env, capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    return dict(json.loads(out))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_tuned_frames_fault_in_far_fewer_pages() -> None:
    tuned, left_alone = _run("1"), _run("0")
    assert tuned["tuned"] is True and left_alone["tuned"] is False
    # 20 frames of 6 MB rows each: left alone, most of every frame is faulted in anew
    assert int(left_alone["faults"]) > 3 * int(tuned["faults"])  # type: ignore[call-overload]
