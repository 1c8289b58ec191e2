"""Anthropic's computer toolset (``computer_toolset_20260801``) executed by a ComputerTool.

One ``tools[]`` entry declares the family; the model then calls each member as a tool
of its own (``tool_use`` with ``name`` the member, ``toolset_name`` ``"computer"`` and
the member's input), and each call is answered by a ``tool_result`` that echoes
``toolset_name``::

    toolset = ComputerToolset(tool, configs={"zoom": {"enabled": False}})
    tools = [toolset.definition()]                 # {"type": "computer_toolset_20260801", ...}
    ... for block in response.content:
            if toolset.handles(block):
                results.append(toolset.tool_result(block))

Members are read by :mod:`~viewfinder.desktop.toolset_actions` and performed by the
same :class:`~viewfinder.desktop.ComputerTool` as the single ``computer`` tool: one
place for settling, scaling, the image budget and elements. A member that ``configs``
disables is not served: a call to it is refused with an ``is_error`` result naming it.
The toolset entry carries no display size: the model's coordinates are those of the
screenshots it gets (the tool's model size).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from viewfinder.core.errors import ViewfinderError
from viewfinder.desktop.actions import ActionInputError
from viewfinder.desktop.formats import to_anthropic_tool_result
from viewfinder.desktop.results import ComputerResult
from viewfinder.desktop.toolset_actions import MEMBERS, parse_member

if TYPE_CHECKING:
    from viewfinder.desktop.computer import ComputerTool

#: The ``type`` of the toolset's ``tools[]`` entry.
TOOLSET_TYPE = "computer_toolset_20260801"
#: The ``toolset_name`` its member calls and results carry.
TOOLSET_NAME = "computer"
#: The keys of one member's config.
CONFIG_KEYS = ("enabled", "defer_loading")
#: The first line of a member's result, as Anthropic's SDK writes it for the pure
#: actions (the model reads the same words whichever client ran the member).
ACKNOWLEDGMENTS: dict[str, str] = {
    "key": "Pressed {text}.",
    "hold_key": "Held {text} for {duration}s.",
    "type": "Typed.",
    "mouse_move": "Moved the mouse.",
    "left_mouse_down": "Left mouse button pressed.",
    "left_mouse_up": "Left mouse button released.",
    "left_click": "Clicked.",
    "left_click_drag": "Dragged.",
    "right_click": "Right-clicked.",
    "middle_click": "Middle-clicked.",
    "double_click": "Double-clicked.",
    "triple_click": "Triple-clicked.",
    "scroll": "Scrolled {scroll_direction}.",
    "wait": "Waited {duration}s.",
}


class ToolsetConfigError(ViewfinderError, ValueError):
    """A toolset ``configs`` that the API would reject."""


class DisabledMemberError(ViewfinderError, RuntimeError):
    """A call to a member that the toolset's ``configs`` disabled."""


def computer_toolset_definition(
    configs: Mapping[str, Mapping[str, Any] | None] | None = None,
    *,
    zoom: bool | None = None,
    cache_control: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``tools[]`` entry of the computer toolset.

    ``configs``: per-member overrides, ``{"<member>": {"enabled": bool, "defer_loading":
    bool}}`` (every member is enabled by default); ``zoom``: switch the ``zoom`` member on
    or off (the same as ``configs["zoom"]["enabled"]``); ``cache_control``: the entry's
    cache breakpoint. Raises :class:`ToolsetConfigError` for an unknown member or key.
    """
    checked = _checked_configs(configs, zoom)
    entry: dict[str, Any] = {"type": TOOLSET_TYPE}
    if checked:
        entry["configs"] = checked
    if cache_control is not None:
        entry["cache_control"] = dict(cache_control)
    return entry


def _checked_configs(
    configs: Mapping[str, Mapping[str, Any] | None] | None, zoom: bool | None
) -> dict[str, dict[str, Any]]:
    if configs is not None and not isinstance(configs, Mapping):
        raise ToolsetConfigError(f"configs must be a mapping of member names, got {configs!r:.60}")
    checked: dict[str, dict[str, Any]] = {}
    for member, config in (configs or {}).items():
        if member not in MEMBERS:
            raise ToolsetConfigError(
                f"configs: {member!r} is not a member of the computer toolset; "
                f"members: {', '.join(MEMBERS)}"
            )
        if config is None:
            continue
        if not isinstance(config, Mapping):
            raise ToolsetConfigError(
                f"configs.{member} must be an object with enabled / defer_loading, "
                f"got {config!r:.60}"
            )
        for key, value in config.items():
            if key not in CONFIG_KEYS:
                raise ToolsetConfigError(
                    f"configs.{member}: unknown key {key!r}; a member's config takes "
                    + " and ".join(CONFIG_KEYS)
                )
            if value is not None and not isinstance(value, bool):
                raise ToolsetConfigError(
                    f"configs.{member}.{key} must be true, false or null, got {value!r:.40}"
                )
        checked[member] = {key: value for key, value in config.items() if value is not None}
    if zoom is not None:
        said = checked.get("zoom", {}).get("enabled")
        if said is not None and said != zoom:
            raise ToolsetConfigError(
                f"zoom={zoom} contradicts configs.zoom.enabled={said}; give one of them"
            )
        checked.setdefault("zoom", {})["enabled"] = zoom
    return {member: config for member, config in checked.items() if config}


class ComputerToolset:
    """The computer toolset's members, performed by ``tool``.

    ``configs`` / ``zoom``: as :func:`computer_toolset_definition` takes them; a member
    they disable is refused. Calling the toolset never raises for a bad call: the result
    says what was wrong (``is_error``) and the next call works.
    """

    def __init__(
        self,
        tool: ComputerTool,
        configs: Mapping[str, Mapping[str, Any] | None] | None = None,
        *,
        zoom: bool | None = None,
        cache_control: Mapping[str, Any] | None = None,
    ) -> None:
        self.tool = tool
        self._definition = computer_toolset_definition(
            configs, zoom=zoom, cache_control=cache_control
        )

    def definition(self) -> dict[str, Any]:
        """The ``tools[]`` entry (a fresh copy each call)."""
        return copy.deepcopy(self._definition)

    @property
    def members(self) -> tuple[str, ...]:
        """The members this toolset serves (the enabled ones), in the SDK's order."""
        return tuple(member for member in MEMBERS if self.enabled(member))

    def enabled(self, member: str) -> bool:
        """Whether ``member`` is served (every member is, unless ``configs`` says not)."""
        configs = self._definition.get("configs", {})
        return member in MEMBERS and configs.get(member, {}).get("enabled", True) is not False

    def __call__(self, name: str, input: Mapping[str, Any] | None = None) -> ComputerResult:
        """Perform member ``name`` with its ``input``; the result carries the settled
        screen, or ``is_error`` with the reason (a disabled or unknown member, a bad
        field, a display that has gone)."""
        try:
            if isinstance(name, str) and name in MEMBERS and not self.enabled(name):
                raise DisabledMemberError(
                    f"{name}: the computer toolset member {name!r} is disabled by this "
                    f"toolset's configs (configs.{name}.enabled is false) and cannot be used; "
                    f"use one of: {', '.join(self.members)}"
                )
            action = parse_member(name, input)
        except (ActionInputError, DisabledMemberError) as exc:
            message = str(exc)
            return ComputerResult(
                action=name if isinstance(name, str) else None,
                api="anthropic",
                text=message,
                is_error=True,
                error=message,
                error_type=type(exc).__name__,
            )
        return self.tool(action)

    def handles(self, block: Any) -> bool:
        """Whether ``block`` (a content block, as a dict or the SDK's model) is a call
        of this toolset's members: a ``tool_use`` whose ``toolset_name`` is ``computer``."""
        return _field(block, "type") == "tool_use" and _field(block, "toolset_name") == TOOLSET_NAME

    def tool_result(self, block: Any) -> dict[str, Any]:
        """Perform the member ``tool_use`` ``block`` (a dict or the SDK's model) and
        return its ``tool_result`` block (:func:`to_toolset_tool_result`)."""
        name, block_id = _field(block, "name"), _field(block, "id")
        toolset = _field(block, "toolset_name")
        raw = _field(block, "input")
        if hasattr(raw, "model_dump"):  # the SDK's input model
            raw = raw.model_dump()
        if toolset != TOOLSET_NAME:
            message = (
                f"{name}: this tool_use belongs to the {toolset!r} toolset, not to the "
                f"{TOOLSET_NAME!r} toolset this executor runs"
            )
            result = ComputerResult(action=name, text=message, is_error=True, error=message)
        else:
            result = self(name, raw)
        return to_toolset_tool_result(result, str(block_id), name, raw)


def to_toolset_tool_result(
    result: ComputerResult,
    tool_use_id: str,
    member: str | None = None,
    input: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``tool_result`` block answering a member call: ``toolset_name`` ``computer``,
    the member's acknowledgment (``Clicked.``, as the SDK words it), then what
    :func:`~viewfinder.desktop.formats.to_anthropic_tool_result` gives (what was done,
    how the screen settled, the screenshot). An error is its message alone."""
    block = to_anthropic_tool_result(result, tool_use_id)
    block["toolset_name"] = TOOLSET_NAME
    template = ACKNOWLEDGMENTS.get(member or "")
    if template and not result.is_error:
        fields = {key: str(value) for key, value in (input or {}).items() if value is not None}
        for key in ("text", "duration", "scroll_direction"):
            template = template.replace("{" + key + "}", fields.get(key, ""))
        block["content"].insert(0, {"type": "text", "text": template})
    if not block["content"]:  # the API refuses an empty result
        block["content"] = [{"type": "text", "text": "done"}]
    return block


def _field(block: Any, name: str) -> Any:
    if isinstance(block, Mapping):
        return block.get(name)
    return getattr(block, name, None)
