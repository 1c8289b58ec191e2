"""The family as the API declares it: its ``tools[]`` entry, which members it serves,
and a member's ``tool_use`` block taken apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from viewfinder.browser.toolset.inputs import MEMBER_INPUTS, OFF_BY_DEFAULT, TOOLSET_TYPE


def toolset_definition(
    configs: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """The ``tools[]`` entry declaring the family (``BetaBrowserToolset20260801Param``)."""
    entry: dict[str, Any] = {"type": TOOLSET_TYPE}
    if configs:
        entry["configs"] = {name: dict(config or {}) for name, config in configs.items()}
    return entry


def enabled_members(configs: Mapping[str, Mapping[str, Any] | None] | None = None) -> set[str]:
    """The members served under ``configs``: each member's ``enabled``, else its default
    (all but ``file_upload``, ``read_console``, ``read_network``, ``javascript_exec``)."""
    configs = configs or {}
    enabled = set()
    for member in MEMBER_INPUTS:
        given = (configs.get(member) or {}).get("enabled")
        if given if given is not None else member not in OFF_BY_DEFAULT:
            enabled.add(member)
    return enabled


#: ``configs`` that enable every member.
ALL_MEMBERS: dict[str, dict[str, Any]] = {member: {"enabled": True} for member in MEMBER_INPUTS}


def block_parts(block: Any) -> tuple[str, str, Mapping[str, Any]]:
    """``(id, name, input)`` of a ``tool_use`` block, an SDK object or a dict."""
    if hasattr(block, "model_dump"):
        block = block.model_dump(by_alias=True, exclude_none=True)
    arguments = block.get("input") or {}
    if hasattr(arguments, "model_dump"):
        arguments = arguments.model_dump(by_alias=True, exclude_none=True)
    return str(block.get("id", "")), str(block.get("name", "")), arguments


def invalid_input(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "input"
        message = "is required" if error["type"] == "missing" else error["msg"]
        if error["type"] == "extra_forbidden":
            message = "is not a field of this member"
        lines.append(f"{where}: {message}")
    return "invalid input: " + "; ".join(lines)
