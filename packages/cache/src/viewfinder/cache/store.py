"""Reading, checking and atomically writing cache files.

Reading turns every problem into a :class:`~viewfinder.cache.errors.CacheFileError`
naming the file, the step and the field. Writing goes to a temporary file in the same
folder, flushed to disk and then renamed over the target, so a crash or a bad model
leaves the old file as it was: a cache file is never half-written.
"""

from __future__ import annotations

import json
import math
import os
import string
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from viewfinder.cache.actions import action_point, point_field
from viewfinder.cache.errors import CacheFileError, HashSettingsError, StepCoordinateError
from viewfinder.cache.hashing import check_hash_size, hash_length
from viewfinder.cache.models import VISUAL_METHODS, CacheFile
from viewfinder.core.errors import OutputPathError
from viewfinder.core.files import output_folder

_HEX = frozenset(string.hexdigits)


def read_cache_file(path: str | os.PathLike[str]) -> CacheFile:
    """Read and check the cache file at ``path`` (format 0.3, 0.2, 0.1 or a bare list)."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CacheFileError(
            "no such file; build one with `viewfinder cache build`", path=source
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CacheFileError(f"cannot be read ({exc})", path=source) from exc
    return parse_cache_json(text, path=source)


def parse_cache_json(text: str | bytes, path: str | os.PathLike[str] | None = None) -> CacheFile:
    """Parse and check cache file JSON; ``path`` is only used to name the file in errors."""
    try:
        raw = json.loads(text, parse_constant=_no_constant)
    except RecursionError as exc:
        raise CacheFileError(
            "nests JSON too deeply to be a cache file; restore it or build it again",
            path=path,
        ) from exc
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise CacheFileError(f"{exc}; numbers in a cache file are finite", path=path) from exc
        hint = " (the file looks truncated)" if exc.pos >= len(text.rstrip()) else ""
        raise CacheFileError(
            f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}{hint}; "
            "restore it or build it again with `viewfinder cache build`",
            path=path,
        ) from exc
    return from_json_data(raw, path=path)


def from_json_data(raw: Any, path: str | os.PathLike[str] | None = None) -> CacheFile:
    """Validate already-parsed JSON data as a cache file and check it."""
    if not isinstance(raw, dict | list):
        raise CacheFileError(
            f"must hold a JSON object (or a list of tool_use blocks), not {type(raw).__name__}",
            path=path,
        )
    if isinstance(raw, dict) and "trajectory" not in raw:
        # every cache file has one, empty or not: without it this is some other JSON file
        found = ", ".join(map(repr, list(raw)[:5])) or "nothing"
        raise CacheFileError(
            f"missing: a cache file holds a 'trajectory' list of tool_use blocks (this "
            f"object holds {found}); pass a file written by `viewfinder cache build`",
            path=path,
            field="trajectory",
        )
    try:
        cache = CacheFile.model_validate(raw)
    except ValidationError as exc:
        raise _located(exc, path) from exc
    except RecursionError as exc:
        raise CacheFileError(
            "nests JSON too deeply to be a cache file; restore it or build it again",
            path=path,
        ) from exc
    if isinstance(raw, list):
        cache._read_version = "0.0"
    else:
        metadata = raw.get("metadata")
        version = metadata.get("version") if isinstance(metadata, dict) else None
        cache._read_version = str(version) if version is not None else "0.0"
    return check_cache_file(cache, path)


def _no_constant(name: str) -> Any:
    # json.loads accepts NaN and Infinity, which no coordinate or duration can be.
    raise ValueError(f"holds {name}, which is not a JSON number")


def _located(exc: ValidationError, path: str | os.PathLike[str] | None) -> CacheFileError:
    error = exc.errors()[0]
    loc = [part for part in error["loc"]]
    step = loc[1] if len(loc) > 1 and loc[0] == "trajectory" and isinstance(loc[1], int) else None
    field = ""
    for part in loc:
        field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
    given = error.get("input")
    shown = f" (got {given!r})" if not isinstance(given, dict | list) else ""
    return CacheFileError(f"{error['msg']}{shown}", path=path, step=step, field=field or None)


def check_cache_file(cache: CacheFile, path: str | os.PathLike[str] | None = None) -> CacheFile:
    """Check what the JSON schema cannot: hash method and sizes, every hash, coordinates."""
    visual = cache.metadata.visual_validation
    hash_digits: int | None = None
    if visual is not None:
        field = "metadata.visual_validation"
        if visual.method not in VISUAL_METHODS:
            raise CacheFileError(
                f"unknown hash method {visual.method!r}; use one of: {', '.join(VISUAL_METHODS)}",
                path=path,
                field=f"{field}.method",
            )
        if visual.region_size <= 0:
            raise CacheFileError(
                f"region size must be a positive number of pixels, got {visual.region_size}",
                path=path,
                field=f"{field}.region_size",
            )
        if visual.threshold is not None and visual.threshold < 0:
            raise CacheFileError(
                f"threshold must be 0 or more bits, got {visual.threshold}",
                path=path,
                field=f"{field}.threshold",
            )
        if visual.method != "none":
            try:
                check_hash_size(visual.method, visual.hash_size)
            except HashSettingsError as exc:
                raise CacheFileError(str(exc), path=path, field=f"{field}.hash_size") from exc
            hash_digits = hash_length(visual.hash_size)
    for index in range(len(cache.trajectory)):
        _check_block(cache, index, hash_digits, path)
    return cache


def _check_block(
    cache: CacheFile, index: int, hash_digits: int | None, path: str | os.PathLike[str] | None
) -> None:
    block = cache.trajectory[index]
    where = f"trajectory[{index}]"
    if block.type != "tool_use":
        raise CacheFileError(
            f"a step must be a 'tool_use' block, not {block.type!r}",
            path=path,
            step=index,
            field=f"{where}.type",
        )
    digest = block.visual_representation
    if digest is not None:
        if not digest or not set(digest) <= _HEX:
            raise CacheFileError(
                f"hash {digest!r} is not hexadecimal; a hash is hex digits such as "
                "'c3a1...' (or null for a step without one)",
                path=path,
                step=index,
                field=f"{where}.visual_representation",
            )
        if hash_digits is not None and len(digest) != hash_digits:
            visual = cache.visual
            raise CacheFileError(
                f"hash {digest!r} has {len(digest)} hex digits, but a {visual.method} hash "
                f"of hash size {visual.hash_size} has {hash_digits}; rebuild the file or fix "
                "metadata.visual_validation.hash_size",
                path=path,
                step=index,
                field=f"{where}.visual_representation",
            )
    _check_numbers(block.input, index, path)
    point = action_point(block.input)
    if point is not None and (point.x < 0 or point.y < 0):
        raise StepCoordinateError(
            f"coordinate ({point.x}, {point.y}) is off the screen (negative)",
            path=path,
            step=index,
            field=f"{where}.{point_field(block.input)}",
        )


#: Inputs that hold a point: ``[x, y]`` of finite numbers.
_POINT_FIELDS = ("coordinate", "start_coordinate")
#: Inputs that hold one number.
_NUMBER_FIELDS = ("scroll_amount", "duration")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_numbers(tool_input: dict[str, Any], index: int, path: Any) -> None:
    """Points and numbers of a step's input: shapes, types, finiteness (before any action)."""
    for name in _POINT_FIELDS:
        value = tool_input.get(name)
        if value is None:
            continue
        if not (isinstance(value, list) and len(value) == 2 and all(map(_is_number, value))):
            raise StepCoordinateError(
                f"{name} must be [x, y], two finite numbers, got {value!r}",
                path=path,
                step=index,
                field=f"trajectory[{index}].input.{name}",
            )
    for name in _NUMBER_FIELDS:
        value = tool_input.get(name)
        if value is not None and not _is_number(value):
            raise CacheFileError(
                f"{name} must be a finite number, got {value!r}",
                path=path,
                step=index,
                field=f"trajectory[{index}].input.{name}",
            )


def save_cache_file(cache: CacheFile, path: str | os.PathLike[str]) -> Path:
    """Check ``cache`` and write it to ``path`` atomically; return the path.

    The JSON goes to a temporary file beside ``path``, is flushed to disk, and replaces
    ``path`` in one rename. Any error leaves ``path`` as it was and no temporary behind.
    """
    target = Path(path)
    check_cache_file(cache, target)
    text = cache.to_json()
    try:
        output_folder(target.parent)
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        handle, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OutputPathError:
        raise
    except OSError as exc:
        raise OutputPathError(target, exc.strerror or str(exc)) from exc
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise OutputPathError(target, exc.strerror or str(exc)) from exc
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
