"""Check a value against a vendor SDK's param TypedDicts, strictly (for tests).

pydantic's TypeAdapter checks the fields' types; an ``Iterable`` field is validated only
as it is iterated, so every iterator in the result is walked. TypedDicts let unknown
keys through, so :func:`check` also refuses a key the TypedDict does not declare
(the API would reject it).
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

from pydantic import TypeAdapter
from typing_extensions import is_typeddict


def check(tp: Any, value: Any) -> None:
    """Raise (pydantic's ValidationError or AssertionError) unless ``value`` is a ``tp``."""
    adapter = TypeAdapter(tp)  # alive while its lazy iterators are walked
    _walk(adapter.validate_python(value))
    problems: list[str] = []
    _keys(tp, value, "$", problems)
    assert not problems, problems


def _walk(value: Any) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _walk(item)
    elif isinstance(value, list | tuple | collections.abc.Iterator):
        for item in value:
            _walk(item)


def _options(tp: Any) -> list[Any]:
    """The types a hint allows (unions and Optional opened, Required/Annotated unwrapped)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return [option for arg in typing.get_args(tp) for option in _options(arg)]
    if origin in (typing.Annotated, typing_required(), typing_not_required()):
        return _options(typing.get_args(tp)[0])
    return [tp]


def typing_required() -> Any:
    import typing_extensions

    return typing_extensions.Required


def typing_not_required() -> Any:
    import typing_extensions

    return typing_extensions.NotRequired


def _keys(tp: Any, value: Any, where: str, problems: list[str]) -> None:
    options = _options(tp)
    if isinstance(value, dict):
        dicts = [option for option in options if is_typeddict(option)]
        if not dicts:
            return
        fitting = [option for option in dicts if _fits(option, value)]
        if not fitting:
            problems.append(f"{where}: {sorted(value)} fits none of {[d.__name__ for d in dicts]}")
            return
        hints = typing.get_type_hints(fitting[0], include_extras=True)
        for key, item in value.items():
            _keys(hints[key], item, f"{where}.{key}", problems)
    elif isinstance(value, list):
        for option in options:
            args = typing.get_args(option)
            if typing.get_origin(option) in (list, collections.abc.Iterable) and args:
                for index, item in enumerate(value):
                    _keys(args[0], item, f"{where}[{index}]", problems)
                return


def _fits(typed: Any, value: dict[str, Any]) -> bool:
    hints = typing.get_type_hints(typed, include_extras=True)
    if not set(value) <= set(hints):
        return False
    kind = hints.get("type")
    if kind is not None and "type" in value:
        literals = [
            arg
            for option in _options(kind)
            if typing.get_origin(option) is typing.Literal
            for arg in typing.get_args(option)
        ]
        if literals and value["type"] not in literals:
            return False
    return True
