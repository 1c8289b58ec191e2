"""A core ``Trajectory`` as JSON (``viewfinder record export``, a desktop run, a code env run).

Frames are inside the file (base64); they are decoded once, when the file is read,
and served from memory. A step without a frame of its own shows none. A file that does
not validate as a whole is read step by step: every step that validates is shown.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from viewfinder.core import TrajectoryMetadata, TrajectoryStep
from viewfinder.viewer.artifacts.model import (
    ArtifactView,
    LoadedArtifact,
    StepView,
    describe,
    event_fields,
    frame_url,
    timeline,
)
from viewfinder.viewer.confine import Confined
from viewfinder.viewer.displays import display_alive


def load_trajectory(file: Path, artifact_id: str, root: Path | None = None) -> LoadedArtifact:
    """Read the Trajectory JSON ``file`` as far as it validates (read only under ``root``,
    default its folder, never through a symlink)."""
    view = ArtifactView(id=artifact_id, kind="trajectory", title=file.name, path=str(file))
    loaded = LoadedArtifact(view)
    loaded.stamp(file)
    try:
        data = json.loads(Confined(root if root is not None else file.parent).read(file))
    except (OSError, ValueError) as exc:
        view.problem(f"is not a readable Trajectory JSON: {exc}")
        return loaded
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        view.problem("is not a Trajectory: it needs a 'steps' list (and 'metadata')")
        return loaded
    metadata = _metadata(data.get("metadata"), view)
    if metadata is not None:
        _facts(metadata, view)
    bad = 0
    for number, raw in enumerate(data["steps"]):
        try:
            step = TrajectoryStep.model_validate(raw)
        except ValidationError as exc:
            bad += 1
            if bad <= 5:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                view.problem(f"step {number} cannot be read: {where}: {first['msg']}")
            continue
        index = len(view.steps)
        shown = StepView(
            index=index,
            kind=step.event.kind.value,
            label=describe(step.event),
            event=event_fields(step.event),
            timestamp=step.event.timestamp,
        )
        if step.frame is not None:
            loaded.frames[(index, "frame")] = step.frame.data
            shown.frame = frame_url(artifact_id, index)
            shown.thumb = frame_url(artifact_id, index, thumb=True)
        view.steps.append(shown)
    if bad > 5:
        view.problem(f"{bad - 5} more steps cannot be read")
    for earlier, following in itertools.pairwise(view.steps):
        if (following.index, "frame") in loaded.frames:
            loaded.frames[(earlier.index, "after")] = loaded.frames[(following.index, "frame")]
            earlier.after = frame_url(artifact_id, earlier.index, "after")
    if view.steps and not loaded.frames:
        view.problem("no step has a frame (exported with --no-frames?)", "warning")
    timeline(view, metadata.created_at if metadata is not None else None)
    return loaded


def _metadata(raw: Any, view: ArtifactView) -> TrajectoryMetadata | None:
    try:
        return TrajectoryMetadata.model_validate(raw or {})
    except ValidationError as exc:
        view.problem(f"its metadata cannot be read: {exc.errors()[0]['msg']}", "warning")
        return None


def _facts(metadata: TrajectoryMetadata, view: ArtifactView) -> None:
    view.facts["source"] = metadata.source
    view.facts["created"] = metadata.created_at.isoformat(timespec="seconds")
    if metadata.goal:
        view.facts["goal"] = metadata.goal
    if metadata.screen is not None:
        view.screen = [metadata.screen.width, metadata.screen.height]
        view.facts["screen"] = f"{metadata.screen.width}x{metadata.screen.height}"
    extra = metadata.model_extra or {}
    display = extra.get("display")
    if isinstance(display, str) and display_alive(display):
        view.live = display
