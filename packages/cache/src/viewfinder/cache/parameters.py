"""``{{parameter}}`` placeholders in a trajectory: find, fill in, and make from recorded text."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from viewfinder.cache.errors import MissingParameterError
from viewfinder.cache.models import CacheFile, ToolUseBlock

#: ``{{name}}``: a name as askui writes them (letters, digits, underscores).
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def _replace(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {key: _replace(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, change) for item in value]
    return value


def used_parameters(cache: CacheFile) -> list[str]:
    """Every placeholder name the trajectory's inputs use, in order of first use."""
    names: dict[str, None] = {}
    for block in cache.trajectory:
        for text in _strings(block.input):
            names.update(dict.fromkeys(PLACEHOLDER.findall(text)))
    return list(names)


def check_parameters(cache: CacheFile, values: Mapping[str, str]) -> None:
    """Raise :class:`MissingParameterError` unless every used placeholder has a value."""
    missing = [name for name in used_parameters(cache) if name not in values]
    if missing:
        raise MissingParameterError(missing, dict(cache.cache_parameters))


def substitute(block: ToolUseBlock, values: Mapping[str, str]) -> ToolUseBlock:
    """A copy of ``block`` with each ``{{name}}`` in its input replaced by ``values[name]``.

    Placeholders without a value are left as they are (check first with
    :func:`check_parameters`).
    """

    def fill(text: str) -> str:
        return PLACEHOLDER.sub(lambda match: values.get(match[1], match[0]), text)

    return block.model_copy(update={"input": _replace(block.input, fill)})


def parameterize(
    cache: CacheFile, recorded: Mapping[str, str], descriptions: Mapping[str, str] | None = None
) -> CacheFile:
    """Turn recorded literal text into placeholders: ``{"user": "Ada"}`` makes ``Ada`` ``{{user}}``.

    Every string in every step's input (and the goal) is rewritten; each name is declared
    in ``cache_parameters`` with its description (default: where it was recorded).
    Hashes are unchanged: they are of the screen *before* each step.
    """
    longest_first = sorted(recorded.items(), key=lambda item: -len(item[1]))

    def fill(text: str) -> str:
        for name, value in longest_first:
            if value:
                text = text.replace(value, "{{" + name + "}}")
        return text

    blocks = [
        block.model_copy(update={"input": _replace(block.input, fill)})
        for block in cache.trajectory
    ]
    declared = dict(cache.cache_parameters)
    for name in recorded:
        declared[name] = (
            (descriptions or {}).get(name)
            or declared.get(name)
            or (f"text typed in place of {{{{{name}}}}}")
        )
    metadata = cache.metadata
    if metadata.goal:
        metadata = metadata.model_copy(update={"goal": fill(metadata.goal)})
    return cache.model_copy(
        update={"trajectory": blocks, "cache_parameters": declared, "metadata": metadata}
    )
