"""``browser_execute`` in the tool registry (``viewfinder_register_tools``).

A library caller's snippet runs in its own process, as :func:`browser_execute` always
did. A host serving code nobody reviewed (``ToolContext.require_sandbox``, set by the
server and the MCP server) never runs it there: the snippet goes to the session's
sandbox (the code env's isolated worker), which starts its own Chromium inside the
sandbox and hands the screenshots back as attached images. Either way the browser and
its page persist across the calls of one session.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from viewfinder.browser.tools import TOOL_DESCRIPTION, TOOL_NAME, BrowserExecuteInput
from viewfinder.core import Tool, ToolContext, ToolError, ToolResult
from viewfinder.core.tools import require_sandbox

#: ``ToolContext`` resource key of the session's in-process ``BrowserSessions``.
SESSIONS_RESOURCE = "browser.sessions"
#: The line the sandboxed run prints before the result's JSON.
_RESULT_MARKER = "@@viewfinder-browser-result@@ "


class BrowserToolInput(BrowserExecuteInput):
    """The arguments of the registered ``browser_execute`` tool: a page to open first, too."""

    url: str | None = Field(
        default=None,
        description="A URL to open in the page before the snippet runs (http, https, file, data).",
    )


def _snippet(arguments: BrowserToolInput) -> str:
    if arguments.url is None:
        return arguments.code
    # the page is opened in its own statement, so line numbers in the snippet's errors
    # are off by one line only (the report shows the snippet's own text)
    return f"await page.goto({arguments.url!r})\n{arguments.code}"


def _in_process(arguments: BrowserToolInput, context: ToolContext) -> ToolResult:
    from viewfinder.browser.registry import BrowserSessions

    sessions = context.resource(SESSIONS_RESOURCE, BrowserSessions)
    result = sessions.execute(_snippet(arguments), arguments.timeout, arguments.description)
    return ToolResult.of(
        result.output,
        *result.screenshots,
        structured={"result": result.result, "ok": result.ok},
        is_error=not result.ok,
    )


#: What the sandbox runs: one browser for the session, kept in the worker's globals.
_SANDBOXED = """\
import json as _vf_json
from viewfinder.browser.registry import BrowserSessions as _VfSessions
if "_vf_browser" not in globals():
    _vf_browser = _VfSessions()
_vf_result = _vf_browser.execute({code!r}, {timeout!r}, {description!r})
for _vf_shot in _vf_result.screenshots:
    attach_image(_vf_shot.data)
print({marker!r} + _vf_json.dumps({{
    "output": _vf_result.output, "result": _vf_result.result, "ok": _vf_result.ok}},
    default=repr))
del _vf_result
"""


def _sandboxed(arguments: BrowserToolInput, sandbox: Any) -> ToolResult:
    code = _SANDBOXED.format(
        code=_snippet(arguments),
        timeout=arguments.timeout,
        description=arguments.description,
        marker=_RESULT_MARKER,
    )
    run = sandbox.run(code, arguments.timeout + 30.0)  # the browser's start-up on top
    report = None
    for line in run.stdout.splitlines():
        if line.startswith(_RESULT_MARKER):
            try:
                report = json.loads(line[len(_RESULT_MARKER) :])
            except ValueError:  # cut short: the run's output was over its limit
                report = None
    if report is None:
        detail = (run.stderr or run.stdout).strip()[-2000:]
        raise ToolError(
            f"{TOOL_NAME}: the browser in this session's sandbox did not run the snippet "
            f"(exit code {run.exit_code}): {detail or 'no output'}"
        )
    return ToolResult.of(
        report["output"],
        *run.screenshots,
        structured={"result": report["result"], "ok": report["ok"]},
        is_error=not report["ok"],
    )


def browser_execute_tool(arguments: BrowserToolInput, context: ToolContext) -> ToolResult:
    """Run the snippet in the session's sandbox when the host requires one, else here."""
    sandbox = require_sandbox(TOOL_NAME, context)
    if sandbox is None:
        return _in_process(arguments, context)
    return _sandboxed(arguments, sandbox)


BROWSER_EXECUTE = Tool(
    TOOL_NAME,
    TOOL_DESCRIPTION,
    BrowserToolInput,
    browser_execute_tool,
    title="Run a snippet against a browser page",
    annotations={"readOnlyHint": False, "openWorldHint": True},
    runs_code=True,
)
