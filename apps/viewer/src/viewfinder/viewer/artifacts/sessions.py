"""Recorder sessions and desktop runs: ``manifest.jsonl``, ``screenshots/N.png``, ``metadata.json``.

A desktop run (a ComputerTool with ``record_to=``) is written in the recorder's format
with ``input_source`` ``computer-tool``; it reads the same way. The manifest is read
line by line here rather than with :func:`viewfinder.recorder.read_manifest`, which
stops at the first bad line: a truncated or damaged manifest shows every line that can
be read, and says which could not. Keys a line has beyond the Event (a drag's ``path``)
are kept for drawing.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from viewfinder.core import Event, EventFormatError
from viewfinder.recorder.errors import SessionFormatError
from viewfinder.recorder.layout import CURRENT_FRAME, SCREENSHOTS, SessionLayout
from viewfinder.recorder.metadata import SessionMetadata
from viewfinder.viewer.artifacts.model import (
    ArtifactView,
    LoadedArtifact,
    StepView,
    VideoView,
    describe,
    event_fields,
    frame_url,
    timeline,
    video_url,
)
from viewfinder.viewer.confine import Confined
from viewfinder.viewer.displays import display_alive
from viewfinder.viewer.errors import RefusedPathError

#: The input source a desktop run's metadata names.
DESKTOP_INPUT = "computer-tool"


def is_session(folder: Path) -> bool:
    layout = SessionLayout(folder)
    return folder.is_dir() and (layout.manifest.is_file() or layout.metadata.is_file())


def load_session(folder: Path, artifact_id: str, root: Path | None = None) -> LoadedArtifact:
    """Read the session in ``folder`` as far as it can be read; its files are read only
    under ``root`` (the viewer's PATH; default ``folder``), never through a symlink."""
    layout = SessionLayout(folder)
    confined = Confined(folder)
    reader = Confined(root if root is not None else folder)
    view = ArtifactView(id=artifact_id, kind="recording", title=folder.name, path=str(folder))
    loaded = LoadedArtifact(view)
    raw_bytes = _metadata_bytes(layout, reader, view)
    metadata = _metadata(layout, raw_bytes, view)
    raw_meta = _raw_metadata(raw_bytes)
    if metadata is not None:
        if metadata.input_source == DESKTOP_INPUT:
            view.kind = "desktop-run"
        view.screen = [metadata.screen.width, metadata.screen.height]
        view.facts.update(_facts(metadata))
        display = metadata.backend_options.get("display") or metadata.platform.get("display")
        if isinstance(display, str) and display_alive(display):
            view.live = display
    loaded.stamp(layout.manifest, layout.metadata)
    lines = _manifest_lines(layout, reader, view)
    frames = _Frames(confined)
    for number, (line_no, data, event) in enumerate(lines):
        step = StepView(
            index=number,
            kind=event.kind.value,
            label=describe(event),
            event=event_fields(event),
            timestamp=event.timestamp,
            frame=frame_url(artifact_id, number),
            thumb=frame_url(artifact_id, number, thumb=True),
        )
        way = data.get("path")
        if isinstance(way, list):
            step.path = [list(map(float, point)) for point in way if _is_point(point)]
        loaded.frames[(number, "frame")] = _frame_source(frames, event.screenshot, step, line_no)
        view.steps.append(step)
    _after_frames(loaded, confined, artifact_id)
    _videos(loaded, confined, raw_meta, artifact_id)
    timeline(view, metadata.started_at if metadata is not None else None)
    missing = [step.index for step in view.steps if step.problem]
    if missing:
        shown = ", ".join(str(index) for index in missing[:10]) + (
            ", ..." if len(missing) > 10 else ""
        )
        view.problem(f"{len(missing)} step(s) have no frame to show (steps {shown})")
    return loaded


def _metadata_bytes(layout: SessionLayout, reader: Confined, view: ArtifactView) -> bytes | None:
    if not os.path.lexists(layout.metadata):
        view.problem(f"{layout.metadata.name} is missing: screen size and times are unknown",
                     "warning")  # fmt: skip
        return None
    try:
        return reader.read(layout.metadata)
    except OSError as exc:  # refused (a symlink, a FIFO, ...) or gone
        view.problem(f"{layout.metadata.name} cannot be read: {exc}")
        return None


def _metadata(
    layout: SessionLayout, data: bytes | None, view: ArtifactView
) -> SessionMetadata | None:
    if data is None:
        return None
    try:
        return SessionMetadata.model_validate_json(data)
    except ValueError as exc:  # pydantic's ValidationError is one
        error = SessionFormatError(f"{layout.metadata} is not valid recording metadata: {exc}")
        view.problem(f"{layout.metadata.name} cannot be read: {_short(error)}")
        return None


def _raw_metadata(raw: bytes | None) -> dict[str, Any]:
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _facts(metadata: SessionMetadata) -> dict[str, str]:
    facts = {
        "screen": f"{metadata.screen.width}x{metadata.screen.height}",
        "backend": metadata.backend,
        "input": metadata.input_source,
        "status": metadata.status + (f" ({metadata.error})" if metadata.error else ""),
        "started": metadata.started_at.isoformat(timespec="seconds"),
    }
    if metadata.stopped_at is not None:
        seconds = (metadata.stopped_at - metadata.started_at).total_seconds()
        facts["length"] = f"{seconds:.1f} s"
    display = metadata.backend_options.get("display")
    if display:
        facts["display"] = str(display)
    return facts


def _manifest_lines(
    layout: SessionLayout, reader: Confined, view: ArtifactView
) -> list[tuple[int, dict[str, Any], Event]]:
    try:
        raw = reader.read(layout.manifest)
    except FileNotFoundError:
        view.problem(f"{layout.manifest.name} is missing: this recording has no steps")
        return []
    except OSError as exc:
        view.problem(f"{layout.manifest.name} cannot be read: {exc}")
        return []
    whole, _, tail = raw.rpartition(b"\n")
    if tail.strip():
        view.problem(
            f"{layout.manifest.name} ends in a torn line ({len(tail)} bytes without its end; "
            "a recording cut off while writing): it is left out"
        )
    found = []
    bad = 0
    for line_no, line in enumerate(whole.split(b"\n") if whole else [], start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not an object")
            event = Event.from_manifest(data)
        except (ValueError, EventFormatError) as exc:
            bad += 1
            if bad <= 5:
                view.problem(f"{layout.manifest.name} line {line_no} cannot be read: {_short(exc)}")
            continue
        found.append((line_no, data, event))
    if bad > 5:
        view.problem(f"{layout.manifest.name}: {bad - 5} more lines cannot be read")
    return found


class _Frames:
    """Finds a session's frames. The usual name, ``screenshots/N.png``, is a regular file
    (not a symlink) straight in the screenshots folder, which is resolved once: such a
    file is inside the folder without resolving each of 10,000 names (most of a long
    session's first read). Any other name is resolved by :class:`Confined`."""

    def __init__(self, confined: Confined) -> None:
        self.confined = confined
        try:
            self.folder: str | None = str(confined.resolve(SCREENSHOTS))
        except RefusedPathError:
            self.folder = None

    def resolve(self, ref: str) -> Path:
        """The frame ``ref`` names; :class:`RefusedPathError` when it leads outside."""
        name = ref.removeprefix(f"{SCREENSHOTS}/")
        if self.folder is not None and name != ref and _plain_name(name):
            path = os.path.join(self.folder, name)
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    return Path(path)
            except OSError:
                return Path(path)  # missing: said as missing, like a resolved name
        return self.confined.resolve(ref)


_PLAIN_NAME = re.compile(r"[^/\\\x00]+")


def _plain_name(name: str) -> bool:
    """A file name alone: no folder in it, not ``.`` or ``..``."""
    return _PLAIN_NAME.fullmatch(name) is not None and name not in (".", "..")


def _frame_source(frames: _Frames, ref: str | None, step: StepView, line_no: int) -> Path | str:
    if not ref:
        step.problem = f"line {line_no} names no frame"
        step.frame = step.thumb = None
        return step.problem
    try:
        path = frames.resolve(ref)
    except RefusedPathError as exc:
        step.problem = str(exc)
        step.frame = step.thumb = None
        return step.problem
    if not path.is_file():
        step.problem = f"frame {ref} is missing"
        step.frame = step.thumb = None
        return step.problem
    return path


def _after_frames(loaded: LoadedArtifact, confined: Confined, artifact_id: str) -> None:
    """Each step's result is the next step's frame; the last one's, the live frame left."""
    steps = loaded.view.steps
    for step, following in itertools.pairwise(steps):
        source = loaded.frames.get((following.index, "frame"))
        if isinstance(source, Path):
            loaded.frames[(step.index, "after")] = source
            step.after = frame_url(artifact_id, step.index, "after")
    if steps:
        try:
            last = confined.resolve(f"{SCREENSHOTS}/{CURRENT_FRAME}")
        except RefusedPathError:
            return
        if last.is_file():
            loaded.frames[(steps[-1].index, "after")] = last
            steps[-1].after = frame_url(artifact_id, steps[-1].index, "after")


def _videos(
    loaded: LoadedArtifact, confined: Confined, metadata: dict[str, Any], artifact_id: str
) -> None:
    runs = metadata.get("runs") if isinstance(metadata.get("runs"), list) else []
    for number, run in enumerate(runs or [], start=1):
        video = run.get("video") if isinstance(run, dict) else None
        if not isinstance(video, dict) or not isinstance(video.get("file"), str):
            continue
        try:
            path = confined.resolve(video["file"])
        except RefusedPathError as exc:
            loaded.view.problem(f"video of run {number}: {exc}")
            continue
        if not path.is_file():
            loaded.view.problem(f"video of run {number} ({video['file']}) is missing", "warning")
            continue
        label = f"run {number}: {video['file']}"
        if video.get("finished") is False:
            label += " (cut off)"
            loaded.view.problem(
                f"the video of run {number} ({video['file']}) was not stopped: the recorder "
                "was killed or still records; it plays up to its last whole second",
                "warning",
            )
        loaded.view.videos.append(
            VideoView(
                url=video_url(artifact_id, len(loaded.videos)),
                label=label,
                started_at=video.get("started_at"),
                duration_s=video.get("duration_s"),
                width=video.get("width"),
                height=video.get("height"),
            )
        )
        loaded.videos.append(path)


def _is_point(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) >= 2
        and all(isinstance(part, int | float) for part in value[:3])
    )


def _short(exc: BaseException) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "..."
