"""viewfinder.tui: a process manager with events, an environment that owns processes,
a browser and a screen, and a Textual app to watch and drive them.

>>> from viewfinder.tui import ProcessManager
>>> async def main():                                           # doctest: +SKIP
...     async with ProcessManager() as processes:
...         await processes.spawn("python", ["-m", "http.server"], process_id="web")
...         async for event in processes.subscribe():
...             print(event)
"""

from typing import TYPE_CHECKING, Any

from viewfinder.tui.errors import (
    CommandNotFoundError,
    ConfigError,
    DuplicateProcessError,
    NothingToCaptureError,
    ProcessError,
    SpawnError,
    TuiCommandError,
    UnknownCommandError,
    UnknownProcessError,
)
from viewfinder.tui.events import (
    EventBus,
    EventSubscription,
    ProcessEvent,
    ProcessExited,
    ProcessOutput,
    ProcessStarted,
)
from viewfinder.tui.output import OutputBuffer, OutputLine
from viewfinder.tui.process import ProcessInfo
from viewfinder.tui.processes import ProcessManager

if TYPE_CHECKING:
    from viewfinder.tui.app import ViewfinderApp, create_app
    from viewfinder.tui.config import ViewfinderConfig, load_config
    from viewfinder.tui.environment import ViewfinderEnvironment

# Imported on first use, so that the process manager works without loading Textual,
# the CDP client or Xlib.
_LAZY = {
    "ViewfinderApp": "viewfinder.tui.app",
    "create_app": "viewfinder.tui.app",
    "ViewfinderConfig": "viewfinder.tui.config",
    "load_config": "viewfinder.tui.config",
    "ViewfinderEnvironment": "viewfinder.tui.environment",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'viewfinder.tui' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "CommandNotFoundError",
    "ConfigError",
    "DuplicateProcessError",
    "EventBus",
    "EventSubscription",
    "NothingToCaptureError",
    "OutputBuffer",
    "OutputLine",
    "ProcessError",
    "ProcessEvent",
    "ProcessExited",
    "ProcessInfo",
    "ProcessManager",
    "ProcessOutput",
    "ProcessStarted",
    "SpawnError",
    "TuiCommandError",
    "UnknownCommandError",
    "UnknownProcessError",
    "ViewfinderApp",
    "ViewfinderConfig",
    "ViewfinderEnvironment",
    "create_app",
    "load_config",
]
