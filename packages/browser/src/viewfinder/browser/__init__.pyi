"""Names of viewfinder.browser, imported on first use (see __init__.py)."""

from .browser import Browser
from .collector import ScreenshotCollector, screenshot_from_result
from .dump import SCREENSHOT_DIR_ENV, dump_file_name, safe_session_name
from .errors import (
    BrowserError,
    BrowserInputError,
    ElementNotFoundError,
    InvalidTimeoutError,
    PageNotFoundError,
    SnippetSessionClosedError,
)
from .page import Page
from .registry import (
    BrowserSessions,
    abrowser_execute,
    browser_execute,
    close_default_sessions,
    default_sessions,
)
from .result import ExecuteError, ExecuteResult, ImageAttachment
from .session import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT, BrowserSession, check_timeout
from .tab import Dialog
from .tools import (
    TOOL_NAME,
    BrowserExecuteInput,
    anthropic_tool,
    anthropic_tool_result,
    arun_tool_call,
    input_schema,
    openai_function_call_output,
    openai_responses_tool,
    openai_tool,
    openai_tool_messages,
    run_tool_call,
    tool_result_message,
)
from .toolset import BrowserToolset, toolset_definition
from .view import CURRENT_VIEW, SnippetSession

__all__ = [
    "CURRENT_VIEW",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "MIN_TIMEOUT",
    "SCREENSHOT_DIR_ENV",
    "TOOL_NAME",
    "Browser",
    "BrowserError",
    "BrowserExecuteInput",
    "BrowserInputError",
    "BrowserSession",
    "BrowserSessions",
    "BrowserToolset",
    "Dialog",
    "ElementNotFoundError",
    "ExecuteError",
    "ExecuteResult",
    "ImageAttachment",
    "InvalidTimeoutError",
    "Page",
    "PageNotFoundError",
    "ScreenshotCollector",
    "SnippetSession",
    "SnippetSessionClosedError",
    "abrowser_execute",
    "anthropic_tool",
    "anthropic_tool_result",
    "arun_tool_call",
    "browser_execute",
    "check_timeout",
    "close_default_sessions",
    "default_sessions",
    "dump_file_name",
    "input_schema",
    "openai_function_call_output",
    "openai_responses_tool",
    "openai_tool",
    "openai_tool_messages",
    "run_tool_call",
    "safe_session_name",
    "screenshot_from_result",
    "tool_result_message",
    "toolset_definition",
]
