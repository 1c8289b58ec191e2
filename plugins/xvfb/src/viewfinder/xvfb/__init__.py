"""viewfinder.xvfb: Xvfb virtual displays, shared-memory capture and XTest input.

>>> from viewfinder.xvfb import Display
>>> with Display(1280, 800) as display:             # doctest: +SKIP
...     display.input.click(100, 100)
...     display.backend().capture().save("frame.png")
"""

from viewfinder.xvfb.backend import XvfbBackend
from viewfinder.xvfb.display import Display, running_displays
from viewfinder.xvfb.errors import DisplayNotFoundError, DisplayStartError, WindowNotViewableError
from viewfinder.xvfb.framebuffer import Framebuffer, XwdHeader
from viewfinder.xvfb.input import XInput
from viewfinder.xvfb.pool import DisplayPool, PoolStats
from viewfinder.xvfb.registry import (
    DisplayRecord,
    find_display,
    list_displays,
    start_display,
    state_dir,
    stop_all_displays,
    stop_display,
)

__all__ = [
    "Display",
    "DisplayNotFoundError",
    "DisplayPool",
    "DisplayRecord",
    "DisplayStartError",
    "Framebuffer",
    "PoolStats",
    "WindowNotViewableError",
    "XInput",
    "XvfbBackend",
    "XwdHeader",
    "find_display",
    "list_displays",
    "running_displays",
    "start_display",
    "state_dir",
    "stop_all_displays",
    "stop_display",
]
