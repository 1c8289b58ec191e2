"""Cache files (askui's format, :mod:`viewfinder.cache`): each hashed step against a screen.

A cache file holds no frames: each hashed step has the hash (and, built in debug mode,
a thumbnail) of the region around its point. Given a screen (``--screen :1``, a live
display captured once per look, or a screenshot file) every hashed step is checked
as ``viewfinder cache check`` does: the first one from the start must match the screen
as it is; later ones that differ are ``later``, as they should be. The page shows the
recorded region beside the screen's, the distance and the threshold; past replays
come from the metadata (failures per step, where the last replay stopped, the steps
replays healed and how, whether the file is still trusted).

A file that does not parse (truncated, damaged) is read as far as it goes: the
metadata object and every whole step before the damage.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import Path
from typing import Any

from PIL import Image
from pydantic import ValidationError

from viewfinder.cache.actions import block_event, describe
from viewfinder.cache.checks import LiveScreen, StepCheck, VisualChecker
from viewfinder.cache.errors import CacheFileError
from viewfinder.cache.models import CacheFile, CacheMetadata, ToolUseBlock
from viewfinder.cache.store import parse_cache_json
from viewfinder.core import EventFormatError, ViewfinderError
from viewfinder.core.geometry import Region
from viewfinder.core.imaging import encode_png
from viewfinder.viewer.artifacts.model import (
    ArtifactView,
    Check,
    CheckState,
    LoadedArtifact,
    StepView,
    event_fields,
    frame_url,
)
from viewfinder.viewer.confine import Confined

_KEY = re.compile(rb'"(metadata|trajectory)"\s*:\s*')


class FrozenScreen(LiveScreen):
    """A screen as one image (a capture taken once, or a screenshot file)."""

    def __init__(self, image: Image.Image) -> None:
        self.picture = image.convert("RGB")
        self._size = self.picture.size

    @property
    def size(self) -> tuple[int, int]:
        return self.picture.size

    def image(self, region: Region | None, context: dict[str, Any]) -> Image.Image:
        return self.picture.crop(region.box) if region is not None else self.picture.copy()


def load_cache(
    file: Path,
    artifact_id: str,
    screen: Image.Image | None,
    screen_name: str | None,
    root: Path | None = None,
) -> LoadedArtifact:
    """Read the cache file ``file`` (only under ``root``, default its folder, never through
    a symlink); check its hashed steps on ``screen`` when given."""
    view = ArtifactView(id=artifact_id, kind="cache", title=file.name, path=str(file))
    loaded = LoadedArtifact(view)
    loaded.stamp(file)
    cache = _read(file, Confined(root if root is not None else file.parent), view)
    meta = cache.metadata
    visual = cache.visual
    view.started_at = meta.created_at
    view.facts.update(
        {
            "format": cache.read_version or meta.version,
            "created": meta.created_at.isoformat(timespec="seconds"),
            "valid": "yes"
            if meta.is_valid
            else f"no: {meta.invalidation_reason or 'marked invalid'}",
            "replays": str(meta.execution_attempts),
            "validation": (
                f"{visual.method}, {visual.region_size} px regions, hash size {visual.hash_size}"
                if visual.active
                else "off"
            ),
        }
    )
    if meta.goal:
        view.facts["goal"] = meta.goal
    if meta.heals:
        view.facts["healed"] = (
            f"{len(meta.heals)} step(s) in replays, the last "
            f"{meta.heals[-1].timestamp.isoformat(timespec='seconds')}"
        )
    if meta.last_executed_at is not None:
        view.facts["last replay"] = meta.last_executed_at.isoformat(timespec="seconds")
    if not meta.is_valid:
        view.problem(
            f"this cache file is marked invalid: {meta.invalidation_reason or 'no reason given'}; "
            "replays refuse it until `viewfinder cache reset`",
            "warning",
        )
    stopped = meta.failures[-1] if meta.failures else None
    if stopped is not None:
        view.problem(
            f"the last failed replay stopped at step {stopped.step_index} "
            f"({stopped.timestamp.isoformat(timespec='seconds')}): {stopped.error_message}",
            "warning",
        )
    checks = _checks(cache, file, screen, view)
    if screen is not None:
        view.screen = list(screen.size)
        view.facts["checked on"] = screen_name or "the given screen"
        loaded.frames[(-1, "screen")] = encode_png(screen.convert("RGB"))
    first_hashed = next(
        (index for index, block in enumerate(cache.trajectory) if block.visual_representation), None
    )
    for index, block in enumerate(cache.trajectory):
        step = StepView(index=index, kind=block.action or block.name, label=describe(block))
        try:
            event = block_event(block)
        except EventFormatError as exc:
            event = None
            step.problem = f"step {index} is not an action replay can perform: {exc}"
        if event is not None:
            step.event = event_fields(event)
            step.kind = event.kind.value
        if block.visual_point and step.event is not None and "position" not in step.event:
            step.event["focus"] = {"x": block.visual_point[0], "y": block.visual_point[1]}
        step.check = _step_check(block, index, checks.get(index), first_hashed, visual.active)
        step.check.failures = meta.failures_at(index)
        if block.visual_element is not None:
            step.check.element = block.visual_element.describe()
        step.check.healed = [
            f"{heal.timestamp.isoformat(timespec='seconds')}: {heal.describe()}"
            for heal in meta.heals
            if heal.step_index == index
        ]
        if stopped is not None and stopped.step_index == index:
            step.check.stopped_here = stopped.error_message
        _pictures(loaded, step, block, checks.get(index), screen, artifact_id)
        view.steps.append(step)
    return loaded


def _read(file: Path, reader: Confined, view: ArtifactView) -> CacheFile:
    try:
        text = reader.read(file)
    except OSError as exc:
        view.problem(f"cannot be read: {exc}")
        return CacheFile()
    try:
        return parse_cache_json(text, path=file)
    except CacheFileError as exc:
        view.problem(str(exc))
    salvaged = _salvage(text)
    if salvaged.trajectory or salvaged.metadata.goal:
        view.problem(
            f"read what comes before the damage: the metadata and {len(salvaged.trajectory)} "
            "whole step(s)",
            "warning",
        )
    return salvaged


def _salvage(text: bytes) -> CacheFile:
    """The metadata and the whole steps before a cache file's damage, as far as they go."""
    decoder = json.JSONDecoder()
    source = text.decode("utf-8", "replace")
    metadata: CacheMetadata = CacheMetadata()
    blocks: list[ToolUseBlock] = []
    for match in _KEY.finditer(text):
        start = len(text[: match.end()].decode("utf-8", "replace"))
        if match.group(1) == b"metadata":
            try:
                value, _ = decoder.raw_decode(source, start)
                metadata = CacheMetadata.model_validate(value)
            except (ValueError, ValidationError):
                pass
            continue
        position = source.find("[", start)
        while position >= 0:
            position = _skip(source, position + 1)
            try:
                value, position = decoder.raw_decode(source, position)
                blocks.append(ToolUseBlock.model_validate(value))
            except (ValueError, ValidationError):
                break
        break
    return CacheFile.model_construct(metadata=metadata, trajectory=blocks, cache_parameters={})


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n,":
        position += 1
    return position


def _checks(
    cache: CacheFile, file: Path, screen: Image.Image | None, view: ArtifactView
) -> dict[int, tuple[StepCheck, Image.Image]]:
    if screen is None or not cache.visual.active:
        return {}
    found: dict[int, tuple[StepCheck, Image.Image]] = {}
    try:
        checker = VisualChecker(cache, None, file)
    except ViewfinderError as exc:
        view.problem(f"cannot check this file's hashes: {exc}")
        return {}
    frozen = FrozenScreen(screen)
    for index, block in enumerate(cache.trajectory):
        if block.visual_representation is None:
            continue
        try:
            found[index] = checker.check(index, block, frozen)
        except (ViewfinderError, ValueError) as exc:
            view.problem(f"step {index} cannot be checked: {exc}")
    return found


def _step_check(
    block: ToolUseBlock,
    index: int,
    found: tuple[StepCheck, Image.Image] | None,
    first_hashed: int | None,
    active: bool,
) -> Check:
    if block.visual_representation is None or not active:
        return Check(state="not hashed")
    if found is None:
        return Check(state="unchecked", hash=block.visual_representation)
    check = found[0]
    state: CheckState = "passed" if check.passed else "failed" if index == first_hashed else "later"
    region = check.region
    return Check(
        state=state,
        hash=check.stored_hash,
        live_hash=check.live_hash,
        distance=check.distance,
        threshold=check.threshold,
        colour_distance=check.colour_distance,
        colour_tolerance=check.colour_tolerance,
        region=None if region is None else [region.x, region.y, region.width, region.height],
    )


def _pictures(
    loaded: LoadedArtifact,
    step: StepView,
    block: ToolUseBlock,
    found: tuple[StepCheck, Image.Image] | None,
    screen: Image.Image | None,
    artifact_id: str,
) -> None:
    index = step.index
    assert step.check is not None
    if block.visual_thumbnail:
        try:
            loaded.frames[(index, "recorded")] = base64.b64decode(
                block.visual_thumbnail, validate=True
            )
            step.check.recorded = frame_url(artifact_id, index, "recorded")
        except (binascii.Error, ValueError):
            step.problem = step.problem or "its stored thumbnail is not base64"
    if found is not None:
        loaded.frames[(index, "live")] = encode_png(found[1].convert("RGB"))
        step.check.live = frame_url(artifact_id, index, "live")
    if screen is not None:
        loaded.frames[(index, "frame")] = loaded.frames[(-1, "screen")]
        step.frame = frame_url(artifact_id, index)
    step.thumb = step.check.live or step.check.recorded
