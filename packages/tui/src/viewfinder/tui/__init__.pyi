"""Names of viewfinder.tui, imported on first use (see __init__.py)."""

from .app import ViewfinderApp, create_app
from .config import ViewfinderConfig, load_config
from .environment import ViewfinderEnvironment
from .errors import (
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
from .events import (
    EventBus,
    EventsDropped,
    EventSubscription,
    ProcessEvent,
    ProcessExited,
    ProcessOutput,
    ProcessStarted,
)
from .output import OutputBuffer, OutputLine
from .process import ProcessInfo
from .processes import ProcessManager

__all__ = [
    "CommandNotFoundError",
    "ConfigError",
    "DuplicateProcessError",
    "EventBus",
    "EventSubscription",
    "EventsDropped",
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
