"""Tool input schemas as every MCP client reads them: inlined, without ``$ref``.

Pydantic writes a nested model once under ``$defs`` and points at it with ``$ref``;
some clients (and the models behind them) do not follow references, and refuse or
misread such a schema. The server lists each tool's schema with every reference
replaced by what it names.
"""

from __future__ import annotations

from typing import Any

from viewfinder.core import ToolError

_DEFS = ("$defs", "definitions")


class RecursiveSchemaError(ToolError):
    """A schema refers to itself, so it has no inlined form."""


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each local ``$ref`` (``#/$defs/Name``) replaced by its target, and
    the ``$defs`` dropped; siblings of a ``$ref`` (a ``description``) are kept."""
    definitions: dict[str, Any] = {}
    for key in _DEFS:
        for name, target in (schema.get(key) or {}).items():
            definitions[f"#/{key}/{name}"] = target

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: resolve(value, seen) for key, value in node.items() if key not in _DEFS}
        ref = out.pop("$ref", None)
        if ref is None:
            return out
        if ref in seen:
            raise RecursiveSchemaError(f"the schema refers to itself through {ref}")
        if ref not in definitions:
            raise RecursiveSchemaError(f"the schema names {ref}, which it does not define")
        return {**resolve(definitions[ref], (*seen, ref)), **out}

    resolved: dict[str, Any] = resolve(schema, ())
    return resolved
