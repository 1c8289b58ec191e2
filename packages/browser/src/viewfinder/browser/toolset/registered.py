"""The browser toolset's members in the tool registry: ``browser_<member>`` for MCP.

Each member is a tool of its own, its parameters the member's input, its result the
member's text and images with the tabs (as text, and as ``structuredContent``). The
members of one session share one :class:`BrowserToolset`, kept in the session's
``ToolContext``: a Chromium attached at ``$VIEWFINDER_CDP_URL`` when set, else one of the
session's own, shown on the session's display when it has one (the desktop's
screenshots see it), headless when not. ``file_upload`` takes paths as the host allows
them (``ToolContext.path``: inside the session's folder).
"""

from __future__ import annotations

import os
from typing import Any

from viewfinder.browser.toolset.executor import BrowserToolset
from viewfinder.browser.toolset.family import ALL_MEMBERS
from viewfinder.browser.toolset.inputs import MEMBER_INPUTS
from viewfinder.core import Tool, ToolContext, ToolResult

#: ``ToolContext`` resource key of the session's toolset.
TOOLSET_RESOURCE = "browser.toolset"
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
        attach = os.environ.get("VIEWFINDER_CDP_URL")
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
