"""``{{parameter}}`` placeholders in a trajectory: find, fill in, and make from recorded text."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from viewfinder.cache.errors import CacheError, MissingParameterError
from viewfinder.cache.models import CacheFile, ToolUseBlock

#: ``{{name}}``: a name as askui writes them (letters, digits, underscores).
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")


#: The input field placeholders live in: the text a step types (or the keys it presses).
#: Coordinates, action names and every other field are never rewritten.
TEXT_FIELD = "text"


def _text_of(block: ToolUseBlock) -> str | None:
    value = block.input.get(TEXT_FIELD)
    return value if isinstance(value, str) else None


def _with_text(block: ToolUseBlock, change: Callable[[str], str]) -> ToolUseBlock:
    text = _text_of(block)
    if text is None:
        return block
    return block.model_copy(update={"input": {**block.input, TEXT_FIELD: change(text)}})


def used_parameters(cache: CacheFile) -> list[str]:
    """Every placeholder name the trajectory's inputs use, in order of first use."""
    names: dict[str, None] = {}
    for block in cache.trajectory:
        text = _text_of(block)
        if text is not None:
            names.update(dict.fromkeys(PLACEHOLDER.findall(text)))
    return list(names)


def check_parameters(cache: CacheFile, values: Mapping[str, str]) -> None:
    """Every used placeholder has a value, and every value a placeholder.

    :class:`MissingParameterError` for a placeholder without a value; :class:`CacheError`
    for a value no step uses (a misspelt name would otherwise replay the recorded text).
    """
    used = used_parameters(cache)
    missing = [name for name in used if name not in values]
    if missing:
        raise MissingParameterError(missing, dict(cache.cache_parameters))
    unknown = [name for name in values if name not in used]
    if unknown:
        known = ", ".join(used) if used else "none"
        raise CacheError(
            f"parameter(s) {', '.join(unknown)} are not used by any step (the file's "
            f"parameters: {known}); check the spelling of -p NAME=VALUE"
        )


def substitute(block: ToolUseBlock, values: Mapping[str, str]) -> ToolUseBlock:
    """A copy of ``block`` with each ``{{name}}`` in its input replaced by ``values[name]``.

    Placeholders without a value are left as they are (check first with
    :func:`check_parameters`).
    """

    def fill(text: str) -> str:
        return PLACEHOLDER.sub(lambda match: values.get(match[1], match[0]), text)

    return _with_text(block, fill)


def parameterize(
    cache: CacheFile, recorded: Mapping[str, str], descriptions: Mapping[str, str] | None = None
) -> CacheFile:
    """Turn recorded literal text into placeholders: ``{"user": "Ada"}`` makes ``Ada`` ``{{user}}``.

    Only the typed ``text`` of each step (and the goal) is rewritten: action names and
    key chords are left alone. Each name is declared in ``cache_parameters`` with its
    description (default: where it was recorded). A name whose text no step typed is a
    :class:`CacheError`. Hashes are unchanged: they are of the screen *before* each step.
    """
    empty = [name for name, value in recorded.items() if not value]
    if empty:
        raise CacheError(f"parameter(s) {', '.join(empty)} have empty text; give NAME=TEXT")
    typed = [
        block.input.get(TEXT_FIELD, "")
        for block in cache.trajectory
        if block.action == "type" and isinstance(block.input.get(TEXT_FIELD), str)
    ]
    unused = [name for name, value in recorded.items() if not any(value in t for t in typed)]
    if unused:
        raise CacheError(
            "no step typed the text of parameter(s) "
            + ", ".join(f"{name} ({recorded[name]!r})" for name in unused)
            + "; give the text exactly as it was typed"
        )
    longest_first = sorted(recorded.items(), key=lambda item: -len(item[1]))

    def fill(text: str) -> str:
        for name, value in longest_first:
            if value:
                text = text.replace(value, "{{" + name + "}}")
        return text

    blocks = [
        _with_text(block, fill) if block.action == "type" else block for block in cache.trajectory
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
