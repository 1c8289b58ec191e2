"""Building cache files: hash the region around each step in the frame seen before it.

Sources: a model's message history (Anthropic messages format), a core
:class:`~viewfinder.core.Trajectory`, a recorder session folder, or a JSON file holding
one of the first two. Only steps whose action is in ``hashed_actions`` (clicks and text
entry by default) get a hash; every other step stores null. The hash settings are
written once, in ``metadata.visual_validation``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from viewfinder.cache.actions import (
    DEFAULT_HASHED_ACTIONS,
    action_point,
    is_hashed,
    is_observation,
    point_field,
)
from viewfinder.cache.errors import CacheFileError, SourceError, StepCoordinateError
from viewfinder.cache.frames import Frame, RecordedStep, frame_of, steps_from_messages
from viewfinder.cache.hashing import (
    DEFAULT_HASH_SIZE,
    DEFAULT_REGION_SIZE,
    check_hash_size,
    check_method,
    check_region_size,
    hasher,
    region_around,
)
from viewfinder.cache.models import (
    CacheFile,
    CacheMetadata,
    TokenUsage,
    ToolUseBlock,
    VisualValidationSettings,
)
from viewfinder.cache.thumbnails import DEFAULT_THUMBNAIL_SIZE, encode_thumbnail, region_thumbnail
from viewfinder.core.errors import RegionError
from viewfinder.core.event import EventKind
from viewfinder.core.geometry import Point
from viewfinder.core.trajectory import Trajectory


@dataclass(frozen=True)
class RecordingSettings:
    """How to hash a recording. Checked when made (:class:`HashSettingsError`)."""

    method: str = "phash"
    region_size: int = DEFAULT_REGION_SIZE
    hash_size: int = DEFAULT_HASH_SIZE
    #: computer-use actions that get a hash (the rest store null)
    hashed_actions: frozenset[str] = field(default=DEFAULT_HASHED_ACTIONS)
    #: store a small thumbnail of each hashed region, for mismatch reports
    debug_thumbnails: bool = False
    thumbnail_size: int = DEFAULT_THUMBNAIL_SIZE
    #: written to the file as the default replay threshold (None: the executor's)
    threshold: int | None = None

    def __post_init__(self) -> None:
        check_method(self.method)
        check_hash_size(self.method, self.hash_size)
        check_region_size(self.region_size)
        object.__setattr__(self, "hashed_actions", frozenset(self.hashed_actions))


def record(
    steps: Iterable[RecordedStep],
    settings: RecordingSettings | None = None,
    *,
    goal: str | None = None,
    token_usage: TokenUsage | None = None,
) -> CacheFile:
    """A cache file from recorded steps; look-only steps (screenshots) are left out."""
    settings = settings or RecordingSettings()
    kept = [step for step in steps if not is_observation(step.block)]
    blocks = [_hashed_block(index, step, settings) for index, step in enumerate(kept)]
    visual = VisualValidationSettings(
        enabled=True,
        method=settings.method,
        region_size=settings.region_size,
        hash_size=settings.hash_size,
        threshold=settings.threshold,
    )
    metadata = CacheMetadata(goal=goal, token_usage=token_usage, visual_validation=visual)
    return CacheFile(metadata=metadata, trajectory=blocks)


def _hashed_block(index: int, step: RecordedStep, settings: RecordingSettings) -> ToolUseBlock:
    block = step.block.model_copy(update={"visual_representation": None})
    if step.frame is None or not is_hashed(block, settings.hashed_actions):
        return block
    image = step.frame.image
    point = action_point(block.input)
    if point is not None:
        origin = step.frame.origin
        point = Point(x=point.x - origin.x, y=point.y - origin.y)
    try:
        region = region_around(point, settings.region_size, image.width, image.height)
    except RegionError as exc:
        raise StepCoordinateError(
            f"{exc}: the step acts outside the {image.width}x{image.height} frame recorded "
            "before it",
            step=index,
            field=f"trajectory[{index}].{point_field(block.input)}",
        ) from exc
    update: dict[str, Any] = {
        "visual_representation": hasher(settings.method, settings.hash_size).hash_region(
            image, region
        )
    }
    if settings.debug_thumbnails:
        thumbnail = region_thumbnail(image, region, settings.thumbnail_size)
        update["visual_thumbnail"] = encode_thumbnail(thumbnail)
    return block.model_copy(update=update)


# -- sources -------------------------------------------------------------------------------


def build_from_messages(
    messages: Sequence[Any], settings: RecordingSettings | None = None, *, goal: str | None = None
) -> CacheFile:
    """A cache file from an Anthropic messages history (tool_use and tool_result blocks)."""
    steps, usage = steps_from_messages(messages)
    return record(steps, settings, goal=goal, token_usage=usage)


def build_from_trajectory(
    trajectory: Trajectory, settings: RecordingSettings | None = None, *, goal: str | None = None
) -> CacheFile:
    """A cache file from a core Trajectory; a step without a frame uses the latest before it."""
    steps: list[RecordedStep] = []
    latest: Frame | None = None
    for number, step in enumerate(trajectory.steps):
        latest = frame_of(step.frame, f"trajectory step {number} frame") or latest
        if step.event.kind is EventKind.SCREENSHOT:
            continue
        block = ToolUseBlock(
            id=f"toolu_vf_{number:04d}", name="computer", input=step.event.to_computer_use()
        )
        steps.append(RecordedStep(block, latest))
    return record(steps, settings, goal=goal or trajectory.metadata.goal)


def build_from_session(
    folder: str | os.PathLike[str],
    settings: RecordingSettings | None = None,
    *,
    goal: str | None = None,
) -> CacheFile:
    """A cache file from a recorder session folder (``manifest.jsonl`` + ``screenshots/``)."""
    try:
        # Imported here: only this source needs the recorder.
        from viewfinder.recorder import load_session
    except ImportError as exc:
        raise SourceError(
            f"{folder} is a recorder session, and reading one needs "
            "viewfinder.recorder.load_session, which this installation does not have; "
            "install viewfinder-recorder, or build from a message history or trajectory JSON"
        ) from exc
    trajectory = load_session(Path(folder))
    return build_from_trajectory(trajectory, settings, goal=goal)


def build_cache(
    source: str | os.PathLike[str],
    settings: RecordingSettings | None = None,
    *,
    goal: str | None = None,
) -> CacheFile:
    """A cache file from a session folder or a JSON file (message history or Trajectory)."""
    path = Path(source)
    if path.is_dir():
        if not (path / "manifest.jsonl").exists():
            raise SourceError(
                f"{path} is a folder without manifest.jsonl, so not a recorder session"
            )
        return build_from_session(path, settings, goal=goal)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SourceError(f"{path}: no such file or folder") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{path}: not a readable JSON file ({exc})") from exc
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    try:
        if isinstance(data, list):
            return build_from_messages(data, settings, goal=goal)
        if isinstance(data, dict) and "steps" in data:
            try:
                trajectory = Trajectory.model_validate(data)
            except ValidationError as exc:
                raise SourceError(f"not a valid viewfinder Trajectory: {exc}") from exc
            return build_from_trajectory(trajectory, settings, goal=goal)
    except SourceError as exc:
        raise SourceError(f"{path}: {exc}") from exc
    except CacheFileError as exc:
        located = exc.at(path)
        if located is exc:
            raise
        raise located from exc
    if isinstance(data, dict) and "trajectory" in data:
        raise SourceError(f"{path} is already a cache file; `viewfinder cache show` reads it")
    raise SourceError(
        f"{path} is neither a message history (a list of messages, or an object with "
        "'messages'), a Trajectory (an object with 'steps'), nor a recorder session folder"
    )
