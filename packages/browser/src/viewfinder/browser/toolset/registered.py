"""The browser toolset's members in the tool registry: ``browser_<member>`` for MCP.

Each member is a tool of its own, its parameters the member's input, its result the
member's text and images with the tabs (as text, and as ``structuredContent``). The
members of one session share one :class:`BrowserToolset`, kept in the session's
``ToolContext``, with every member enabled.

Which Chromium: the one at the DevTools URL the host gives (``ToolContext.values``
under :data:`CDP_URL_VALUE`: ``viewfinder mcp --browser ws://...``) or
``$VIEWFINDER_CDP_URL``. A host that keeps model-driven work in a session's sandbox
(``require_sandbox``) starts no browser of its own for these tools (its sandbox has no
network to reach one in it from here), so without such a URL a call says how to give
one. A library caller's session launches a Chromium: shown on the session's display
when it has one, headless when not. ``file_upload`` takes paths as the host allows them
(``ToolContext.path``: inside the session's folder).
"""

from __future__ import annotations

import os
from typing import Any

from viewfinder.browser.toolset.executor import BrowserToolset
from viewfinder.browser.toolset.family import ALL_MEMBERS
from viewfinder.browser.toolset.inputs import MEMBER_INPUTS
from viewfinder.cdp import CDP_URL_ENV
from viewfinder.core import Tool, ToolContext, ToolError, ToolResult

#: ``ToolContext`` resource key of the session's toolset.
TOOLSET_RESOURCE = "browser.toolset"
#: ``ToolContext.values`` key of the DevTools URL of the browser the host gives.
CDP_URL_VALUE = "browser.cdp_url"
PREFIX = "browser_"
_READ_ONLY = {
    "list_tabs",
    "read_page",
    "get_page_text",
    "read_console",
    "read_network",
    "find",
    "screenshot",
    "zoom",
    "wait",
}
_NOTES = {
    "read_page": ' Lines read `role "name" [ref_7]`; pass a ref to act on that element.',
    "find": " Words of the query are matched against each element's role, name and value.",
    "screenshot": " Points you give later are in this image's pixels.",
    "javascript_exec": " Write an expression, not `return`; its value comes back as JSON.",
}


class _DisplayEnv:
    """A display named ``":N"``, as the launcher wants it (``env()``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def env(self) -> dict[str, str]:
        return {**os.environ, "DISPLAY": self.name}


def session_toolset(context: ToolContext) -> BrowserToolset:
    """The toolset of ``context``'s session, made on first use."""

    def make() -> BrowserToolset:
        attach = context.values.get(CDP_URL_VALUE) or os.environ.get(CDP_URL_ENV)
        if not attach and context.require_sandbox:
            raise ToolError(
                "the browser toolset drives a browser this server is given, and none was: "
                "start the server with --browser <DevTools URL> (a Chromium started with "
                f"--remote-debugging-port) or set ${CDP_URL_ENV}"
            )
        display = _DisplayEnv(context.display) if context.display and not attach else None
        # an MCP host has no configs to send: every member is a tool it lists
        return BrowserToolset(
            cdp_url=attach,
            display=display,
            configs=ALL_MEMBERS,
            paths=lambda value: context.path(value),
        )

    toolset: BrowserToolset = context.resource(TOOLSET_RESOURCE, make)
    return toolset


def _tool(member: str) -> Tool:
    model = MEMBER_INPUTS[member]

    def call(arguments: Any, context: ToolContext) -> ToolResult:
        data = arguments.model_dump(by_alias=True, exclude_none=True)
        return session_toolset(context).execute(member, data).to_tool_result()

    summary = (model.__doc__ or member).strip()
    return Tool(
        PREFIX + member,
        f"In the session's browser: {summary}{_NOTES.get(member, '')} Acts on the active "
        "tab unless tab_id names another; the result ends with the open tabs.",
        model,
        call,
        title=f"Browser: {member.replace('_', ' ')}",
        annotations={"readOnlyHint": member in _READ_ONLY, "openWorldHint": True},
    )


def toolset_tools() -> list[Tool]:
    """One registry tool per member of ``browser_toolset_20260801``."""
    return [_tool(member) for member in MEMBER_INPUTS]
