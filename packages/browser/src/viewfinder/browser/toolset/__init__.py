"""Anthropic's ``browser_toolset_20260801``, executed on a real Chromium over CDP.

:class:`BrowserToolset` runs each member's ``tool_use`` block and returns the
``tool_result`` block; :func:`toolset_definition` is the ``tools[]`` entry that
declares the family; :mod:`viewfinder.browser.toolset.registered` puts the members in
the tool registry (``browser_<member>``) for MCP. See docs/browser.md.
"""

from viewfinder.browser.toolset.executor import BrowserToolset
from viewfinder.browser.toolset.family import ALL_MEMBERS, enabled_members, toolset_definition
from viewfinder.browser.toolset.inputs import (
    MEMBER_INPUTS,
    OFF_BY_DEFAULT,
    TOOLSET_NAME,
    TOOLSET_TYPE,
)
from viewfinder.browser.toolset.result import MemberResult, TabEntry

__all__ = [
    "ALL_MEMBERS",
    "MEMBER_INPUTS",
    "OFF_BY_DEFAULT",
    "TOOLSET_NAME",
    "TOOLSET_TYPE",
    "BrowserToolset",
    "MemberResult",
    "TabEntry",
    "enabled_members",
    "toolset_definition",
]
