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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from viewfinder.cache.actions import (
    COMPUTER_ACTIONS,
    DEFAULT_HASHED_ACTIONS,
    action_point,
    is_hashed,
    is_observation,
    point_field,
)
from viewfinder.cache.errors import (
    CacheFileError,
    HashSettingsError,
    SourceError,
    StepCoordinateError,
)
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
from viewfinder.cache.parameters import parameterize
from viewfinder.cache.regions import apply_masks, colour_signature, masks_in, typed_area
from viewfinder.cache.thumbnails import encode_thumbnail, region_thumbnail
from viewfinder.core.errors import RegionError
from viewfinder.core.event import Event, EventKind
from viewfinder.core.geometry import Point, Region
from viewfinder.core.trajectory import Trajectory


@dataclass(frozen=True)
class RecordingSettings:
    """How to hash a recording. Checked when made (:class:`HashSettingsError`)."""

    method: str = "phash"
    region_size: int = DEFAULT_REGION_SIZE
    hash_size: int = DEFAULT_HASH_SIZE
    #: computer-use actions that get a hash (the rest store null)
    hashed_actions: frozenset[str] = field(default=DEFAULT_HASHED_ACTIONS)
    #: store each hashed region's pixels (``visual_thumbnail``, a small PNG): a replay
    #: searches for them where the screen changed (healing) and mismatch reports show them
    thumbnails: bool = True
    #: kept for older callers: thumbnails are stored by default now
    debug_thumbnails: bool = False
    #: longest side of a stored thumbnail (None: the region as it is, what template
    #: matching needs; a smaller one is matched on a screen scaled to it)
    thumbnail_size: int | None = None
    #: written to the file as the default replay threshold (None: the executor's)
    threshold: int | None = None

    def __post_init__(self) -> None:
        check_method(self.method)
        check_hash_size(self.method, self.hash_size)
        check_region_size(self.region_size)
        actions = frozenset(self.hashed_actions)
        unknown = sorted(actions - COMPUTER_ACTIONS)
        if unknown:
            raise HashSettingsError(
                f"unknown action(s) to hash: {', '.join(unknown)}; use "
                f"computer-use actions such as {', '.join(sorted(DEFAULT_HASHED_ACTIONS))}"
            )
        object.__setattr__(self, "hashed_actions", actions)
        if self.thumbnail_size is not None and self.thumbnail_size < 8:
            raise HashSettingsError(
                f"thumbnail size {self.thumbnail_size} is too small to show a region; use 8 "
                "pixels or more, or None to keep the region at its own size"
            )


def record(
    steps: Iterable[RecordedStep],
    settings: RecordingSettings | None = None,
    *,
    goal: str | None = None,
    token_usage: TokenUsage | None = None,
    parameters: Mapping[str, str] | None = None,
) -> CacheFile:
    """A cache file from recorded steps; look-only steps (screenshots) are left out.

    ``parameters`` (``{"user": "Ada"}``) turn recorded text into ``{{name}}``
    placeholders (:func:`~viewfinder.cache.parameters.parameterize`), and mask where that
    text shows in later steps' regions. Steps are taken one at a time and each frame is
    forgotten once the step after it is hashed, so memory stays flat however long the
    recording.
    """
    settings = settings or RecordingSettings()
    hashing = _Hashing(settings, dict(parameters or {}))
    blocks: list[ToolUseBlock] = []
    previous: RecordedStep | None = None
    for step in steps:
        if is_observation(step.block):
            continue
        if previous is not None:
            blocks.append(hashing.block(len(blocks), previous, step.frame))
        previous = step
    if previous is not None:
        blocks.append(hashing.block(len(blocks), previous, None))
    hashing.release()
    visual = VisualValidationSettings(
        enabled=True,
        method=settings.method,
        region_size=settings.region_size,
        hash_size=settings.hash_size,
        threshold=settings.threshold,
    )
    metadata = CacheMetadata(goal=goal, token_usage=token_usage, visual_validation=visual)
    cache = CacheFile(metadata=metadata, trajectory=blocks)
    return parameterize(cache, parameters) if parameters else cache


#: Actions that put the keyboard focus where they click: a later ``type`` is checked there.
_FOCUSING_ACTIONS = frozenset({"left_click", "double_click", "triple_click"})


class _Hashing:
    """Hashes steps in order, remembering the focused field and the parameterised text."""

    def __init__(self, settings: RecordingSettings, parameters: dict[str, str]) -> None:
        self.settings = settings
        self.values = [value for value in parameters.values() if value]
        self.focus: Point | None = None
        self.masks: list[Region] = []
        self._held: Frame | None = None

    def block(self, index: int, step: RecordedStep, following: Frame | None) -> ToolUseBlock:
        block = step.block.model_copy(update={"visual_representation": None})
        hashed = self._hash(index, block, step.frame) if step.frame is not None else None
        if hashed is not None:
            block = hashed
        if block.action == "type" and step.frame is not None and following is not None:
            self._mask_typed(block, step.frame, following)
        point = action_point(block.input)
        if block.action in _FOCUSING_ACTIONS and point is not None:
            self.focus = point
        self._keep(following)
        return block

    def _keep(self, frame: Frame | None) -> None:
        # Only the frame the next step needs stays decoded.
        if self._held is not None and self._held is not frame:
            self._held.release()
        self._held = frame

    def release(self) -> None:
        self._keep(None)

    def _mask_typed(self, block: ToolUseBlock, before: Frame, after: Frame) -> None:
        text = block.input.get("text")
        if not isinstance(text, str) or not any(value in text for value in self.values):
            return
        if before.origin != after.origin:
            return
        area = typed_area(before.image, after.image, before.origin)
        if area is not None:
            self.masks.append(area)

    def _hash(self, index: int, block: ToolUseBlock, frame: Frame) -> ToolUseBlock | None:
        settings = self.settings
        if not is_hashed(block, settings.hashed_actions):
            return None
        image = frame.image
        point = action_point(block.input)
        update: dict[str, Any] = {}
        if point is None and block.action == "type" and self.focus is not None:
            # Typing shows in the focused field: check there, not the whole screen.
            point = self.focus
            update["visual_point"] = [point.x, point.y]
        origin = frame.origin
        local = Point(x=point.x - origin.x, y=point.y - origin.y) if point is not None else None
        try:
            region = region_around(local, settings.region_size, image.width, image.height)
        except RegionError as exc:
            raise StepCoordinateError(
                f"{exc}: the step acts outside the {image.width}x{image.height} frame "
                "recorded before it",
                step=index,
                field=f"trajectory[{index}].{point_field(block.input)}",
            ) from exc
        box = region or Region(x=0, y=0, width=image.width, height=image.height)
        on_screen = Region(
            x=box.x + origin.x, y=box.y + origin.y, width=box.width, height=box.height
        )
        masks = [mask for mask in self.masks if masks_in(on_screen, [mask])]
        crop = apply_masks(image.crop(box.box), masks_in(on_screen, masks))
        update["visual_representation"] = hasher(settings.method, settings.hash_size).hash_image(
            crop
        )
        update["visual_colour"] = colour_signature(crop)
        if masks:
            update["visual_mask"] = [[m.x, m.y, m.width, m.height] for m in masks]
        if settings.thumbnails or settings.debug_thumbnails:
            thumbnail = region_thumbnail(image, region, settings.thumbnail_size)
            update["visual_thumbnail"] = encode_thumbnail(thumbnail)
        return block.model_copy(update=update)


# -- sources -------------------------------------------------------------------------------


def build_from_messages(
    messages: Sequence[Any],
    settings: RecordingSettings | None = None,
    *,
    goal: str | None = None,
    parameters: Mapping[str, str] | None = None,
) -> CacheFile:
    """A cache file from an Anthropic messages history (tool_use and tool_result blocks)."""
    steps, usage = steps_from_messages(messages)
    return record(steps, settings, goal=goal, token_usage=usage, parameters=parameters)


def build_from_trajectory(
    trajectory: Trajectory,
    settings: RecordingSettings | None = None,
    *,
    goal: str | None = None,
    parameters: Mapping[str, str] | None = None,
) -> CacheFile:
    """A cache file from a core Trajectory; a step without a frame uses the latest before it."""

    def steps() -> Iterator[RecordedStep]:
        latest: Frame | None = None
        for number, step in enumerate(trajectory.steps):
            latest = frame_of(step.frame, f"trajectory step {number} frame") or latest
            if step.event.kind is EventKind.SCREENSHOT:
                continue
            yield RecordedStep(_computer_block(number, step.event), latest)

    return record(steps(), settings, goal=goal or trajectory.metadata.goal, parameters=parameters)


def _computer_block(number: int, event: Event) -> ToolUseBlock:
    # the element under the pointer (when the recording read one) lets a replay find the
    # target again where it moved; the application in front there, that it is still hers
    return ToolUseBlock(
        id=f"toolu_vf_{number:04d}",
        name="computer",
        input=event.to_computer_use(),
        visual_element=event.element,
        visual_window=event.window,
    )


def build_from_session(
    folder: str | os.PathLike[str],
    settings: RecordingSettings | None = None,
    *,
    goal: str | None = None,
    parameters: Mapping[str, str] | None = None,
) -> CacheFile:
    """A cache file from a recorder session folder (``manifest.jsonl`` + ``screenshots/``).

    Frames are read from disk one step at a time, so a long session costs no more memory
    than a short one.
    """
    try:
        # Imported here: only this source needs the recorder.
        from viewfinder.recorder import read_session
    except ImportError as exc:
        raise SourceError(
            f"{folder} is a recorder session, and reading one needs "
            "viewfinder.recorder.read_session, which this installation does not have; "
            "install viewfinder-recorder, or build from a message history or trajectory JSON"
        ) from exc
    session = read_session(Path(folder))

    def steps() -> Iterator[RecordedStep]:
        latest: Frame | None = None
        for entry in session.entries:
            path = session.frame_path(entry)
            if path is not None:
                if not path.is_file():
                    raise SourceError(
                        f"{session.layout.manifest} line {entry.line_no} (seq {entry.seq}) "
                        f"names {entry.event.screenshot}, which is missing from {session.root}"
                    )
                latest = Frame(path=path, label=f"session frame {entry.event.screenshot}")
            if entry.event.kind is EventKind.SCREENSHOT:
                continue
            yield RecordedStep(_computer_block(entry.seq, entry.event), latest)

    return record(steps(), settings, goal=goal, parameters=parameters)


def build_cache(
    source: str | os.PathLike[str],
    settings: RecordingSettings | None = None,
    *,
    goal: str | None = None,
    parameters: Mapping[str, str] | None = None,
) -> CacheFile:
    """A cache file from a session folder or a JSON file (message history or Trajectory).

    ``parameters`` (``{"user": "Ada"}``) make the recorded text a ``{{user}}`` placeholder
    and keep the checks of later steps blind to where that text shows.
    """
    path = Path(source)
    if path.is_dir():
        if not (path / "manifest.jsonl").exists():
            raise SourceError(
                f"{path} is a folder without manifest.jsonl, so not a recorder session"
            )
        return build_from_session(path, settings, goal=goal, parameters=parameters)
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
            return build_from_messages(data, settings, goal=goal, parameters=parameters)
        if isinstance(data, dict) and "steps" in data:
            try:
                trajectory = Trajectory.model_validate(data)
            except ValidationError as exc:
                raise SourceError(f"not a valid viewfinder Trajectory: {exc}") from exc
            return build_from_trajectory(trajectory, settings, goal=goal, parameters=parameters)
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
