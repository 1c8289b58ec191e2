"""Everything a replay checks before its first action, so it never stops half-done.

A replay that finds a bad step after performing the ones before it leaves the screen in
a state nobody asked for. So, before anything is performed, every remaining step is read
as the action it will be (after its parameters are filled in): a known computer-use
action, key names the backend can press, text it can type, coordinates on today's screen;
and the file the attempt will be recorded in must be writable.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from viewfinder.cache.actions import action_point, block_event, is_observation, point_field
from viewfinder.cache.errors import CacheError, CacheFileError, StepCoordinateError
from viewfinder.cache.models import CacheFile
from viewfinder.cache.parameters import substitute
from viewfinder.core.errors import ActionError, EventFormatError
from viewfinder.core.event import Event, EventKind


def check_steps_can_run(
    cache: CacheFile,
    values: Mapping[str, str],
    start: int,
    screen_size: tuple[int, int],
    path: Path | None,
) -> None:
    """Raise a :class:`CacheFileError` naming the first step from ``start`` that cannot run."""
    width, height = screen_size
    for index in range(start, len(cache.trajectory)):
        block = cache.trajectory[index]
        if is_observation(block):
            continue
        where = f"trajectory[{index}]"
        if "action" in block.input and block.action is None:
            raise CacheFileError(
                f"action must be a string, got {block.input['action']!r}",
                path=path,
                step=index,
                field=f"{where}.input.action",
            )
        try:
            event = block_event(substitute(block, values))
        except EventFormatError as exc:
            raise CacheFileError(str(exc), path=path, step=index, field=f"{where}.input") from exc
        if event is None:
            continue  # another tool: replay hands it to an agent when it gets there
        try:
            _check_keys(event)
        except ActionError as exc:
            raise CacheFileError(
                str(exc), path=path, step=index, field=f"{where}.input.text"
            ) from exc
        point = action_point(block.input)
        if point is not None and not (0 <= point.x < width and 0 <= point.y < height):
            raise StepCoordinateError(
                f"coordinate ({point.x}, {point.y}) is outside the {width}x{height} "
                "screen; the screen is smaller than when this step was recorded",
                path=path,
                step=index,
                field=f"{where}.{point_field(block.input)}",
            )


def _check_keys(event: Event) -> None:
    # Key names follow X keysym spelling on every backend, so the X table judges them.
    from viewfinder.xvfb.keys import keysym_for_char, keysym_for_name

    for name in event.modifiers:
        keysym_for_name(name)
    if event.kind in (EventKind.KEY, EventKind.HOLD_KEY):
        for name in event.keys:
            keysym_for_name(name)
    elif event.kind is EventKind.TYPE:
        for char in event.text or "":
            if char not in "\n\t":
                keysym_for_char(char)


def check_writable(path: Path) -> None:
    """Raise :class:`CacheError` when the attempt could not be recorded in ``path``.

    Saving writes a temporary file beside ``path`` and renames it over, so the folder
    must take a new file; trying it is the only check that read-only mounts answer
    truthfully.
    """
    try:
        handle, probe = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".probe")
    except OSError as exc:
        raise CacheError(
            f"{path}: the replay could not be recorded in the file ({exc.strerror or exc}); "
            "nothing was performed. Copy the file somewhere writable, or replay with "
            "--no-save (save=False)"
        ) from exc
    os.close(handle)
    os.unlink(probe)
    if path.exists() and not os.access(path, os.W_OK):
        raise CacheError(
            f"{path}: the file is read-only, so the replay could not be recorded in it; "
            "nothing was performed. Make it writable, or replay with --no-save (save=False)"
        )
