"""Turning a snippet's return value into JSON data.

JSON values pass through (tuples and sets become lists). A screenshot in the value is
already an attachment, so it becomes a short note naming it instead of megabytes of
base64. Pydantic models and dataclasses become their fields. Anything else (a
function, an open socket, a dict with non-string keys...) cannot be JSON; its
``repr()`` is used instead and :func:`to_json` says so, so the caller can tell the
model.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence, Set
from typing import Any

from pydantic import BaseModel

from viewfinder.core import Screenshot, ViewfinderError
from viewfinder.core.imaging import image_size

#: Longest ``repr()`` kept for a value that is not JSON.
MAX_REPR_CHARS = 2_000
#: Longest return value handed back, as JSON text: past it, its head as a string with a
#: note (a model reads no more, and the sandbox's output, which carries it, is capped).
MAX_RESULT_CHARS = 200_000
_MAX_DEPTH = 50


class _NotJson(Exception):
    def __init__(self, what: str) -> None:
        self.what = what


def to_json(value: Any, screenshots: Sequence[Screenshot] = ()) -> tuple[Any, str | None]:
    """``(data, note)``: ``value`` as JSON data, and None or why ``repr()`` was used."""
    try:
        return _convert(value, screenshots, 0), None
    except _NotJson as problem:
        text = repr(value)
        if len(text) > MAX_REPR_CHARS:
            text = text[:MAX_REPR_CHARS] + "..."
        return text, (
            f"the return value is not JSON-serialisable ({problem.what}); its repr() is "
            "given instead. Return plain data (str, numbers, bool, None, lists, dicts "
            "with string keys)."
        )


def bounded(data: Any, limit: int = MAX_RESULT_CHARS) -> tuple[Any, str | None]:
    """``(data, note)``: JSON ``data`` as it is when its JSON text is within ``limit``
    characters; else the first ``limit`` characters of that text, as a string, and a
    note saying so."""
    text = json.dumps(data, default=repr)
    if len(text) <= limit:
        return data, None
    return text[:limit], (
        f"the return value is {len(text)} characters of JSON; only its first {limit} are "
        "given, as text. Return less (a slice, a summary), or only what you need."
    )


def _convert(value: Any, screenshots: Sequence[Screenshot], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise _NotJson("it is nested too deeply, or refers to itself")
    if isinstance(value, str):
        return _image_note(value, screenshots) or value
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJson(f"{value!r} has no JSON form")
        return value
    if isinstance(value, Screenshot):
        return _screenshot_note(value, screenshots)
    if isinstance(value, BaseModel):
        return _convert(value.model_dump(mode="json"), screenshots, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _convert(dataclasses.asdict(value), screenshots, depth + 1)
    if isinstance(value, Mapping):
        converted = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotJson(f"a dict key {key!r} is not a string")
            converted[key] = _convert(item, screenshots, depth + 1)
        return converted
    if isinstance(value, list | tuple | Set):
        return [_convert(item, screenshots, depth + 1) for item in value]
    raise _NotJson(f"a {type(value).__name__} has no JSON form")


def _screenshot_note(shot: Screenshot, screenshots: Sequence[Screenshot]) -> str:
    for index, attached in enumerate(screenshots, start=1):
        if attached is shot:
            return f"<screenshot {index}: {shot.format} {shot.width}x{shot.height}, attached>"
    return f"<screenshot: {shot.format} {shot.width}x{shot.height}, not attached>"


#: How base64 of each image format begins (its magic number, encoded).
_BASE64_MAGIC = {"iVBORw0KGgo": "png", "/9j/": "jpeg", "UklGR": "webp"}
_DATA_URL = re.compile(r"data:image/[a-z+]+;base64,", re.IGNORECASE)


def _image_note(text: str, screenshots: Sequence[Screenshot]) -> str | None:
    """A short note for a string that is an image in base64 (or a data: URL), else None.

    A model reads the text of a result; an image belongs in an attachment, not in
    megabytes of base64 next to it.
    """
    if len(text) < 64:
        return None
    prefix = _DATA_URL.match(text)
    payload = text[prefix.end() :] if prefix else text
    fmt = next((name for magic, name in _BASE64_MAGIC.items() if payload.startswith(magic)), None)
    if fmt is None:
        return None
    for attached in screenshots:
        if attached.b64() == payload:
            return _screenshot_note(attached, screenshots)
    try:
        data = base64.b64decode(payload, validate=True)
        width, height = image_size(data)
    except (ValueError, ViewfinderError):
        return None  # text that only starts like an image
    return (
        f"<image: {fmt} {width}x{height}, {len(payload):,} characters of base64 left out; "
        "take screenshots with page.screenshot() to get them attached>"
    )


def render(data: Any) -> str:
    """``data`` as compact JSON text for the output."""
    return json.dumps(data, ensure_ascii=False)
