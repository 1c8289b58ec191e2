"""viewfinder.core: models, hooks, the plugin manager and the capture facade.

>>> from viewfinder.core import capture
>>> shot = capture("xvfb", display=":99")          # doctest: +SKIP
>>> shot.save("frame.png")                          # doctest: +SKIP
"""

from viewfinder.core.backend import Availability, CaptureBackend
from viewfinder.core.capture import (
    BackendSpec,
    acapture,
    backend_specs,
    capture,
    get_backend,
    resolve_backend,
)
from viewfinder.core.errors import (
    ActionError,
    BackendUnavailableError,
    CaptureError,
    CaptureNotSupportedError,
    DependencyMissingError,
    DisplayGoneError,
    EventFormatError,
    NoBackendAvailableError,
    PluginError,
    RegionError,
    ScreenshotDecodeError,
    UnknownBackendError,
    ViewfinderError,
    WindowNotFoundError,
)
from viewfinder.core.event import POINTER_KINDS, Event, EventKind
from viewfinder.core.geometry import Point, Region
from viewfinder.core.hookspecs import hookimpl, hookspec
from viewfinder.core.plugins import (
    ENTRY_POINT_GROUP,
    get_plugin_manager,
    plugin_infos,
    publish_screenshot,
    register_plugin,
    reset_plugin_manager,
    unregister_plugin,
)
from viewfinder.core.screenshot import Screenshot
from viewfinder.core.trajectory import (
    ScreenSize,
    Trajectory,
    TrajectoryMetadata,
    TrajectoryStep,
    VisualValidation,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "POINTER_KINDS",
    "ActionError",
    "Availability",
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
    "plugin_infos",
    "publish_screenshot",
    "register_plugin",
    "reset_plugin_manager",
    "resolve_backend",
    "unregister_plugin",
]
