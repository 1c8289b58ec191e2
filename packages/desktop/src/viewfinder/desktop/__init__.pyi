"""Names of viewfinder.desktop, imported on first use (see __init__.py)."""

from .actions import (
    Action,
    ActionInputError,
    CoordinateRangeError,
    detect_api,
    parse_action,
)
from .apps import (
    App,
    AppNotFoundError,
    AppStartError,
    DesktopConfigError,
    DesktopError,
    WindowTimeoutError,
)
from .computer import ComputerTool, ComputerToolClosedError
from .computer_options import ComputerToolOptionError
from .computer_toolset import (
    ComputerToolset,
    DisabledMemberError,
    ToolsetConfigError,
    computer_toolset_definition,
    to_toolset_tool_result,
)
from .desktop import Desktop
from .formats import (
    ANTHROPIC_BETAS,
    ResultFormatError,
    anthropic_tool_definition,
    openai_computer_tool_definition,
    openai_tool_definition,
    to_anthropic_tool_result,
    to_openai_computer_call_output,
    to_openai_input_items,
)
from .lease import DisplaySource, parse_size
from .openai_batch import run_computer_call
from .results import ComputerResult
from .scaling import TARGETS, Scaling, ScalingError
from .screen_elements import ElementCoveredError, ElementGoneError
from .screenshot_tool import ScreenshotInput
from .settle import (
    DamageChanges,
    PolledChanges,
    SettleOptions,
    SettleOptionsError,
    SettleReport,
    SettleUnavailableError,
    settle,
)
from .state import DesktopNotFoundError, DesktopRecord, start_desktop, stop_desktop
from .steps import StepLog
from .tools import ComputerInput
from .windows import wait_for_window

__all__ = [
    "ANTHROPIC_BETAS",
    "TARGETS",
    "Action",
    "ActionInputError",
    "App",
    "AppNotFoundError",
    "AppStartError",
    "ComputerInput",
    "ComputerResult",
    "ComputerTool",
    "ComputerToolClosedError",
    "ComputerToolOptionError",
    "ComputerToolset",
    "CoordinateRangeError",
    "DamageChanges",
    "Desktop",
    "DesktopConfigError",
    "DesktopError",
    "DesktopNotFoundError",
    "DesktopRecord",
    "DisabledMemberError",
    "DisplaySource",
    "ElementCoveredError",
    "ElementGoneError",
    "PolledChanges",
    "ResultFormatError",
    "Scaling",
    "ScalingError",
    "ScreenshotInput",
    "SettleOptions",
    "SettleOptionsError",
    "SettleReport",
    "SettleUnavailableError",
    "StepLog",
    "ToolsetConfigError",
    "WindowTimeoutError",
    "anthropic_tool_definition",
    "computer_toolset_definition",
    "detect_api",
    "openai_computer_tool_definition",
    "openai_tool_definition",
    "parse_action",
    "parse_size",
    "run_computer_call",
    "settle",
    "start_desktop",
    "stop_desktop",
    "to_anthropic_tool_result",
    "to_openai_computer_call_output",
    "to_openai_input_items",
    "to_toolset_tool_result",
    "wait_for_window",
]
