"""Keep large frame buffers in the heap instead of mapping fresh pages for each frame.

glibc's malloc serves each block over its mmap threshold (128 KiB, raised as big blocks
are freed, up to 32 MiB) with a new anonymous mapping and unmaps it on free, and it
returns the top of the heap to the system above its trim threshold. A capture allocates
several frame-sized blocks (the grabbed pixels, the image, the padded rows, the deflated
parts), so every frame paid for tens of thousands of fresh page faults: measured on a
1920x1080 capture, a fifth of the time of grab + PNG + base64 (docs/benchmarks.md).

:func:`keep_frame_buffers` raises both thresholds once, so freed frame buffers are reused
by the next frame. The process keeps up to :data:`TRIM_THRESHOLD` of freed memory for
that instead of handing it back at once. Set ``VIEWFINDER_MALLOC_TUNING=0`` to leave
the allocator alone. Nothing happens where malloc is not glibc's.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading

log = logging.getLogger(__name__)

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: glibc's upper bound for the mmap threshold on 64-bit systems.
MMAP_THRESHOLD = 32 * 1024 * 1024
#: Freed memory kept at the top of the heap before it is handed back to the system.
TRIM_THRESHOLD = 128 * 1024 * 1024
ENV = "VIEWFINDER_MALLOC_TUNING"

_lock = threading.Lock()
_tuned: bool | None = None  # None: not tried yet


def keep_frame_buffers() -> bool:
    """Tune glibc's malloc for frame-sized blocks (once); True when it is tuned."""
    global _tuned
    if _tuned is not None:
        return _tuned
    with _lock:
        if _tuned is None:
            _tuned = _tune()
        return _tuned


def _tune() -> bool:
    if os.environ.get(ENV, "1") == "0":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    tuned = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    tuned = bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and tuned
    if not tuned:
        log.debug("mallopt refused the frame buffer thresholds")
    return tuned
