"""The inputs of ``browser_toolset_20260801``'s members, as the Messages API defines them.

One pydantic model per member, field for field the ``input`` of its ``tool_use`` block
(``anthropic.types.beta.BetaBrowser*Input``); the tests check each against the SDK's
own types. The same models are the parameters of the members' registered tools
(``browser_<member>`` over MCP), so what a model sends is validated one way everywhere.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TOOLSET_TYPE = "browser_toolset_20260801"
TOOLSET_NAME = "browser"
#: Members the API serves only when the toolset's ``configs`` enable them (the rest are
#: on unless disabled): a page's scripts, its logs and the machine's files.
OFF_BY_DEFAULT = frozenset({"file_upload", "read_console", "read_network", "javascript_exec"})
#: The most seconds ``wait`` and ``hold_key`` take.
MAX_SECONDS = 30.0


def _plain_schema(schema: Any) -> None:
    """Drop the ``discriminator`` of a union from the schema (its mapping names
    ``$defs`` that MCP's inlined schemas no longer have); the ``oneOf`` stays."""
    if isinstance(schema, dict):
        schema.pop("discriminator", None)
        for value in schema.values():
            _plain_schema(value)
    elif isinstance(schema, list):
        for value in schema:
            _plain_schema(value)


class _Input(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, json_schema_extra=_plain_schema
    )


class _OnTab(_Input):
    tab_id: str | None = Field(
        default=None, description="Tab to act on. Defaults to the active tab when omitted."
    )


class CoordinateTarget(_Input):
    """A point in the viewport, in the pixels of a full-viewport screenshot."""

    type: Literal["coordinate"]
    x: int = Field(description="Pixels from the left edge of the viewport.")
    y: int = Field(description="Pixels from the top edge of the viewport.")


class RefTarget(_Input):
    """An element by a reference (``ref_7``) from this tab's ``read_page`` or ``find``."""

    type: Literal["ref"]
    ref: str = Field(description='An element reference (e.g. "ref_7").')


ClickTarget = Annotated[CoordinateTarget | RefTarget, Field(discriminator="type")]
_MODIFIERS = 'Modifier chord held for the action ("shift", "ctrl+shift").'


class NavigateInput(_OnTab):
    """Go to a URL, or "back" / "forward" / "reload"."""

    url: str = Field(description='A URL (https:// when no scheme), or "back"/"forward"/"reload".')


class ListTabsInput(_Input):
    """List the open tabs."""


class NewTabInput(_Input):
    """Open a new empty tab."""


class SwitchTabInput(_Input):
    """Make a tab the active one."""

    tab_id: str = Field(description="The tab to switch to.")


class CloseTabInput(_Input):
    """Close a tab."""

    tab_id: str = Field(description="The tab to close.")


class ReadPageInput(_OnTab):
    """The page's accessibility tree with element references."""

    depth: int | None = Field(default=None, ge=1, description="Maximum tree depth. Default 15.")
    filter: Literal["all", "interactive"] | None = Field(
        default=None,
        description='Omitted: visible elements; "interactive": interactive ones only; '
        '"all": off-viewport elements too.',
    )
    ref: str | None = Field(default=None, description="Read the subtree of this element only.")


class GetPageTextInput(_OnTab):
    """The page's visible text, its article or main content first."""


class ReadConsoleInput(_OnTab):
    """Console entries since the tab was attached or last read."""


class ReadNetworkInput(_OnTab):
    """Network requests since the tab was attached or last read."""


class FindInput(_OnTab):
    """Elements matching a description, with references."""

    query: str = Field(min_length=1, description='What to find ("search bar", "save button").')


class FormInputInput(_OnTab):
    """Set a form field, select or checkbox by reference."""

    target: RefTarget
    value: str | float | bool = Field(
        description="Text for fields, an option's value or text for selects, a boolean "
        "for checkboxes and radio buttons."
    )


class FileUploadInput(_OnTab):
    """Set the files of a file input."""

    target: RefTarget
    document_ids: list[str] | None = Field(default=None, description="Files staged elsewhere.")
    paths: list[str] | None = Field(default=None, description="Paths on this machine.")


class ScrollToInput(_OnTab):
    """Scroll an element into view."""

    target: RefTarget


class ScreenshotInput(_OnTab):
    """Capture the viewport."""


class ZoomInput(_OnTab):
    """A viewport region, captured at a higher resolution."""

    region: list[int] = Field(description="[x0, y0, x1, y1] in viewport pixels.")


class _Click(_OnTab):
    target: ClickTarget
    modifiers: str | None = Field(default=None, description=_MODIFIERS)


class LeftClickInput(_Click):
    """Left-click a point or an element."""


class RightClickInput(_Click):
    """Right-click a point or an element."""


class MiddleClickInput(_Click):
    """Middle-click a point or an element."""


class DoubleClickInput(_Click):
    """Double-click a point or an element."""


class TripleClickInput(_Click):
    """Triple-click a point or an element."""


class HoverInput(_OnTab):
    """Move the pointer over a point or an element."""

    target: ClickTarget


class LeftClickDragInput(_OnTab):
    """Press at ``from``, drag to ``target``, release."""

    from_: CoordinateTarget = Field(alias="from")
    target: CoordinateTarget


class LeftMouseDownInput(_OnTab):
    """Press the left button at a point."""

    target: CoordinateTarget


class LeftMouseUpInput(_OnTab):
    """Release the left button at a point."""

    target: CoordinateTarget


class MouseMoveInput(_OnTab):
    """Move the pointer to a point."""

    target: CoordinateTarget


class ScrollInput(_OnTab):
    """Turn the wheel at a point."""

    scroll_direction: Literal["up", "down", "left", "right"]
    target: CoordinateTarget
    scroll_amount: int | None = Field(default=None, ge=1, le=10, description="Notches, default 3.")


class TypeInput(_OnTab):
    """Type text at the focus."""

    text: str


class KeyInput(_OnTab):
    """Press a key or chord ("ctrl+a"); spaces separate presses."""

    text: str = Field(min_length=1)
    repeat: int | None = Field(default=None, ge=1, le=100)


class HoldKeyInput(_OnTab):
    """Hold a key or chord down for some seconds."""

    duration: float = Field(ge=0, le=MAX_SECONDS)
    text: str = Field(min_length=1)


class WaitInput(_OnTab):
    """Pause."""

    duration: float = Field(ge=0, le=MAX_SECONDS)


class JavascriptExecInput(_OnTab):
    """Evaluate JavaScript in the page; the last expression's value comes back."""

    text: str = Field(min_length=1)


#: Every member, by the name its ``tool_use`` blocks carry, in the SDK's order.
MEMBER_INPUTS: dict[str, type[BaseModel]] = {
    "navigate": NavigateInput,
    "list_tabs": ListTabsInput,
    "new_tab": NewTabInput,
    "switch_tab": SwitchTabInput,
    "close_tab": CloseTabInput,
    "read_page": ReadPageInput,
    "get_page_text": GetPageTextInput,
    "read_console": ReadConsoleInput,
    "read_network": ReadNetworkInput,
    "find": FindInput,
    "form_input": FormInputInput,
    "file_upload": FileUploadInput,
    "scroll_to": ScrollToInput,
    "screenshot": ScreenshotInput,
    "zoom": ZoomInput,
    "left_click": LeftClickInput,
    "right_click": RightClickInput,
    "middle_click": MiddleClickInput,
    "double_click": DoubleClickInput,
    "triple_click": TripleClickInput,
    "hover": HoverInput,
    "left_click_drag": LeftClickDragInput,
    "left_mouse_down": LeftMouseDownInput,
    "left_mouse_up": LeftMouseUpInput,
    "mouse_move": MouseMoveInput,
    "scroll": ScrollInput,
    "type": TypeInput,
    "key": KeyInput,
    "hold_key": HoldKeyInput,
    "wait": WaitInput,
    "javascript_exec": JavascriptExecInput,
}
