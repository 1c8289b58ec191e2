"""Names of viewfinder.core, imported on first use (see __init__.py)."""

from .backend import Availability, CaptureBackend
from .capture import BackendSpec, acapture, backend_specs, capture, get_backend, resolve_backend
from .errors import (
    ActionError,
    BackendOptionError,
    BackendUnavailableError,
    CaptureError,
    CaptureNotSupportedError,
    DependencyMissingError,
    DisplayGoneError,
    EventFormatError,
    NoBackendAvailableError,
    OutputPathError,
    PluginError,
    RegionError,
    ScreenshotDecodeError,
    UnknownBackendError,
    ViewfinderError,
    WindowNotFoundError,
)
from .event import POINTER_KINDS, Event, EventKind
from .files import output_folder
from .geometry import Point, Region
from .hookspecs import hookimpl, hookspec
from .plugins import (
    ENTRY_POINT_GROUP,
    get_plugin_manager,
    plugin_infos,
    publish_screenshot,
    register_plugin,
    reset_plugin_manager,
    unregister_plugin,
)
from .screenshot import Screenshot
from .trajectory import ScreenSize, Trajectory, TrajectoryMetadata, TrajectoryStep, VisualValidation

__all__ = [
    "ENTRY_POINT_GROUP",
    "POINTER_KINDS",
    "ActionError",
    "Availability",
    "BackendOptionError",
    "BackendSpec",
    "BackendUnavailableError",
    "CaptureBackend",
    "CaptureError",
    "CaptureNotSupportedError",
    "DependencyMissingError",
    "DisplayGoneError",
    "Event",
    "EventFormatError",
    "EventKind",
    "NoBackendAvailableError",
    "OutputPathError",
    "PluginError",
    "Point",
    "Region",
    "RegionError",
    "ScreenSize",
    "Screenshot",
    "ScreenshotDecodeError",
    "Trajectory",
    "TrajectoryMetadata",
    "TrajectoryStep",
    "UnknownBackendError",
    "ViewfinderError",
    "VisualValidation",
    "WindowNotFoundError",
    "acapture",
    "backend_specs",
    "capture",
    "get_backend",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "output_folder",
    "plugin_infos",
    "publish_screenshot",
    "register_plugin",
    "reset_plugin_manager",
    "resolve_backend",
    "unregister_plugin",
]
