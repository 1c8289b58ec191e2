"""Names of viewfinder.xvfb, imported on first use (see __init__.py)."""

from .backend import XvfbBackend
from .display import Display, running_displays
from .errors import DisplayNotFoundError, DisplayStartError, WindowNotViewableError
from .framebuffer import Framebuffer, XwdHeader
from .input import XInput
from .pool import DisplayPool, PoolStats
from .registry import (
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
