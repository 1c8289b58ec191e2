"""viewfinder.browser: ``browser_execute`` runs a snippet against a page over CDP and
returns every screenshot it took as image attachments.

>>> from viewfinder.browser import BrowserSession
>>> with BrowserSession(url="https://example.org") as session:      # doctest: +SKIP
...     result = session.execute('''
... print(await page.title())
... await page.screenshot()
... await page.screenshot(format="jpeg")
... ''')
>>> result.output                                                    # doctest: +SKIP
'Example Domain\\n[2 screenshots attached]'
>>> [shot.mime_type for shot in result.screenshots]                  # doctest: +SKIP
['image/png', 'image/jpeg']
"""

from viewfinder.browser.browser import Browser
from viewfinder.browser.collector import ScreenshotCollector, screenshot_from_result
from viewfinder.browser.dump import SCREENSHOT_DIR_ENV, dump_file_name, safe_session_name
from viewfinder.browser.errors import (
    BrowserError,
    BrowserInputError,
    ElementNotFoundError,
    InvalidTimeoutError,
    SnippetSessionClosedError,
)
from viewfinder.browser.page import Page
from viewfinder.browser.registry import (
    BrowserSessions,
    abrowser_execute,
    browser_execute,
    close_default_sessions,
    default_sessions,
)
from viewfinder.browser.result import ExecuteError, ExecuteResult, ImageAttachment
from viewfinder.browser.session import (
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    BrowserSession,
    check_timeout,
)
from viewfinder.browser.tools import (
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
from viewfinder.browser.view import CURRENT_VIEW, SnippetSession

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
    "ElementNotFoundError",
    "ExecuteError",
    "ExecuteResult",
    "ImageAttachment",
    "InvalidTimeoutError",
    "Page",
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
]
