"""Folders of loose captures: ``viewfinder exec --out`` runs and browser ``--shots`` dumps.

An exec run is ``stdout.txt``, ``stderr.txt``, ``capture-001.png``, ... and
``video-001.mp4``, ... with ``run.json`` (its summary: exit code, the videos' first
frame times). Each capture is a step (no action: the code captured when it chose);
the videos play beside them.

A browser dump is ``<session>-<call start, UTC>-<seq>.<ext>`` files
(:func:`viewfinder.browser.dump.dump_file_name`): each file is a step, grouped by call,
in the order of the calls and then of the screenshots in each.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from viewfinder.viewer.artifacts.model import (
    ArtifactView,
    LoadedArtifact,
    StepView,
    VideoView,
    frame_url,
    timeline,
    video_url,
)
from viewfinder.viewer.confine import Confined
from viewfinder.viewer.errors import RefusedPathError

EXEC_TEXTS = ("stdout.txt", "stderr.txt")
CAPTURE = re.compile(r"^capture-(\d+)\.png$")
#: ``video-001.mp4`` once the run ended; ``video-step1-1.mp4`` while it records (or
#: when it was killed first: a fragmented MP4, playable up to its last second)
VIDEO = re.compile(r"^video-(?:step(\d+)-)?(\d+)\.mp4$")
SHOT = re.compile(r"^(?P<session>.+)-(?P<stamp>\d{8}T\d{12}Z)-(?P<seq>\d+)\.(png|jpg|webp)$")
#: Longest stdout or stderr shown; the rest is left out with a note.
TEXT_LIMIT = 256 * 1024


def is_exec_run(folder: Path) -> bool:
    return folder.is_dir() and all((folder / name).is_file() for name in EXEC_TEXTS)


def is_browser_shots(folder: Path) -> bool:
    if not folder.is_dir():
        return False
    return any(SHOT.match(entry.name) for entry in _entries(folder))


def _entries(folder: Path, limit: int = 20000) -> list[Path]:
    found = []
    for number, entry in enumerate(folder.iterdir()):
        if number >= limit:
            break
        found.append(entry)
    return found


def load_exec_run(folder: Path, artifact_id: str, root: Path | None = None) -> LoadedArtifact:
    """Read an ``exec --out`` folder; its files only under ``root`` (default ``folder``)."""
    view = ArtifactView(id=artifact_id, kind="exec-run", title=folder.name, path=str(folder))
    loaded = LoadedArtifact(view)
    # a rerun deletes and writes files (the folder's stamp), and rewrites the texts
    loaded.stamp(folder, *(folder / name for name in (*EXEC_TEXTS, "run.json")))
    confined = Confined(folder)
    reader = Confined(root if root is not None else folder)
    summary = _summary(folder, reader, view)
    if "exit_code" in summary:
        view.facts["exit code"] = str(summary["exit_code"])
    elif summary.get("status") == "running":
        view.facts["status"] = "running (or killed before its end)"
    if isinstance(summary.get("file"), str):
        view.facts["file"] = summary["file"]
    for name in EXEC_TEXTS:
        view.texts[name.removesuffix(".txt")] = _text(confined, reader, name, view)
    captures = sorted(
        (int(match.group(1)), entry)
        for entry in _entries(folder)
        if (match := CAPTURE.match(entry.name))
    )
    for number, (_, entry) in enumerate(captures):
        step = StepView(index=number, kind="screenshot", label=f"capture {entry.name}")
        _add_file(loaded, confined, step, entry.name, artifact_id)
        view.steps.append(step)
    listed = {Path(str(video.get("path", ""))).name: video for video in summary.get("videos", [])
              if isinstance(video, dict)}  # fmt: skip
    videos = sorted(
        (match.group(1) is not None, int(match.group(1) or 0), int(match.group(2)), entry.name)
        for entry in _entries(folder)
        if (match := VIDEO.match(entry.name))
    )
    for cut_off, _, _, name in videos:
        try:
            path = confined.resolve(name)
        except RefusedPathError as exc:
            view.problem(str(exc))
            continue
        facts = listed.get(name, {})
        if cut_off:
            view.problem(
                f"{name} was not stopped: the run was killed or still runs; it plays up "
                "to its last whole second",
                "warning",
            )
        view.videos.append(
            VideoView(
                url=video_url(artifact_id, len(loaded.videos)),
                label=f"{name} (cut off)" if cut_off else name,
                started_at=facts.get("started_at"),
                duration_s=facts.get("duration_s"),
                width=facts.get("width"),
                height=facts.get("height"),
            )
        )
        loaded.videos.append(path)
    if not view.steps and not view.videos:
        view.problem("this run made no captures and no videos", "warning")
    starts = [video.started_at for video in view.videos if video.started_at is not None]
    view.started_at = min(starts) if starts else None
    return loaded


def load_browser_shots(folder: Path, artifact_id: str) -> LoadedArtifact:
    """Read a browser ``--shots`` folder."""
    view = ArtifactView(id=artifact_id, kind="browser-shots", title=folder.name, path=str(folder))
    loaded = LoadedArtifact(view)
    loaded.stamp(folder)  # a new shot is a new file
    confined = Confined(folder)
    shots = []
    for entry in _entries(folder):
        match = SHOT.match(entry.name)
        if match is None:
            continue
        stamp = datetime.strptime(match.group("stamp"), "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC)
        shots.append((stamp, match.group("session"), int(match.group("seq")), entry.name))
    shots.sort()
    for number, (stamp, session, seq, name) in enumerate(shots):
        step = StepView(
            index=number,
            kind="screenshot",
            label=f"{session}: screenshot {seq}",
            timestamp=stamp,
            group=f"{session} call at {stamp.isoformat(timespec='milliseconds')}",
        )
        _add_file(loaded, confined, step, name, artifact_id)
        view.steps.append(step)
    view.facts["calls"] = str(len({step.group for step in view.steps}))
    timeline(view, None)
    for step in view.steps:
        step.duration_s = None  # call starts, not shot times: no durations to tell
    return loaded


def _add_file(
    loaded: LoadedArtifact, confined: Confined, step: StepView, name: str, artifact_id: str
) -> None:
    try:
        loaded.frames[(step.index, "frame")] = confined.resolve(name)
    except RefusedPathError as exc:
        step.problem = str(exc)
        loaded.frames[(step.index, "frame")] = step.problem
        return
    step.frame = frame_url(artifact_id, step.index)
    step.thumb = frame_url(artifact_id, step.index, thumb=True)


def _summary(folder: Path, reader: Confined, view: ArtifactView) -> dict[str, Any]:
    path = folder / "run.json"
    if not os.path.lexists(path):
        return {}
    try:
        data = json.loads(reader.read(path))
    except (OSError, ValueError) as exc:
        view.problem(f"run.json cannot be read: {exc}", "warning")
        return {}
    return data if isinstance(data, dict) else {}


def _text(confined: Confined, reader: Confined, name: str, view: ArtifactView) -> str:
    try:
        data = reader.read(confined.resolve(name), TEXT_LIMIT, cut=True)
    except OSError as exc:  # refused (a symlink, a FIFO, ...) or gone
        view.problem(f"{name}: {exc}")
        return ""
    text = data[:TEXT_LIMIT].decode("utf-8", "replace")
    if len(data) > TEXT_LIMIT:
        text += f"\n[... more than {TEXT_LIMIT // 1024} KiB; the rest is not shown]\n"
    return text
