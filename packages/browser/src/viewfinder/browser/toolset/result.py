"""A member's outcome, and the ``tool_result`` block (or registry result) that carries it.

A non-error result ends with one ``browser_state`` block: every open tab (its id,
title and URL, the active one marked) and the tabs this call opened. An error result
is text alone, naming the member and the field, with ``is_error`` set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from viewfinder.browser.toolset.inputs import TOOLSET_NAME
from viewfinder.core import Screenshot, ToolResult


@dataclass(frozen=True)
class TabEntry:
    """One open tab as a result reports it."""

    tab_id: str
    title: str
    url: str
    active: bool


@dataclass
class MemberResult:
    """What one member call did: text, images (within the client's budget), the tabs."""

    member: str
    text: str
    images: list[Screenshot] = field(default_factory=list)
    is_error: bool = False
    tabs: list[TabEntry] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)

    @classmethod
    def error(cls, member: str, message: str) -> MemberResult:
        """An error result whose text starts with the member's name."""
        prefix = f"{member}: " if not message.startswith(f"{member}:") else ""
        return cls(member, prefix + message, is_error=True)

    def browser_state(self) -> dict[str, Any]:
        """The ``browser_state`` block (``BetaBrowserStateBlockParam``)."""
        block: dict[str, Any] = {
            "type": "browser_state",
            "tabs": [
                {"tab_id": tab.tab_id, "title": tab.title, "url": tab.url, "active": tab.active}
                for tab in self.tabs
            ],
        }
        if self.opened:  # "nothing to report" is no field, never an empty list
            block["state_changes"] = [
                {"type": "tab_opened", "tab_id": tab_id} for tab_id in self.opened
            ]
        return block

    def tool_result(self, tool_use_id: str) -> dict[str, Any]:
        """The ``tool_result`` block answering ``tool_use_id`` (``BetaToolResultBlockParam``)."""
        content: list[dict[str, Any]] = [{"type": "text", "text": self.text}]
        for shot in self.images:
            content.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": shot.mime_type, "data": shot.b64()},
                }
            )
        if not self.is_error:
            content.append(self.browser_state())
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "toolset_name": TOOLSET_NAME,
            "content": content,
        }
        if self.is_error:
            block["is_error"] = True
        return block

    def tabs_text(self) -> str:
        """The tabs as lines, the active one marked (for transports without the block)."""
        lines = [
            f"{'*' if tab.active else ' '} {tab.tab_id}: {tab.title or '(no title)'} {tab.url}"
            for tab in self.tabs
        ]
        if self.opened:
            lines.append("opened by this call: " + ", ".join(self.opened))
        return "\n".join(lines)

    def to_tool_result(self) -> ToolResult:
        """This result in the tool registry's shape (what MCP sends): the text, the
        images, the tabs as text and as structured data."""
        if self.is_error:
            return ToolResult.error(self.text)
        return ToolResult.of(
            self.text,
            *self.images,
            "Tabs:\n" + self.tabs_text(),
            structured={"browser_state": self.browser_state()},
        )
