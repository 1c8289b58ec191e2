"""What the page is given: an artifact as JSON (the server gives JSON; the page renders it).

Every kind of artifact (a recording, a desktop run, a cache file, a Trajectory JSON, an
``exec --out`` folder, a browser ``--shots`` folder) becomes an :class:`ArtifactView`:
steps in order, each with its action, its times and the addresses of its frames, plus
the problems met while reading it. Reading never fails as a whole: what could not be
read is a :class:`Problem`, shown as a banner above what could.

Frames are not in the JSON: each step names URLs the page loads lazily. Behind them the
server keeps a :class:`FrameSource` per step (a file inside the artifact's folder, or
bytes held in memory, or the reason it is refused).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, Field

from viewfinder.core import Event

ArtifactKind = Literal[
    "recording", "desktop-run", "cache", "trajectory", "exec-run", "browser-shots", "unknown"
]
FrameKind = Literal["frame", "after", "recorded", "live"]
CheckState = Literal["passed", "failed", "later", "unchecked", "not hashed"]


class Problem(BaseModel):
    """Something wrong with the input: ``error`` (parts could not be read) or ``warning``."""

    level: Literal["error", "warning"] = "error"
    message: str


class Check(BaseModel):
    """A cache step's stored hash against a screen (or what the file says of past replays).

    ``state``: ``passed``; ``failed`` (the first hashed step from the start that does
    not match: a replay stops there); ``later`` (a later step that differs now, as it
    should: earlier steps change the screen); ``unchecked`` (no screen to check on).
    """

    state: CheckState
    hash: str | None = None
    live_hash: str | None = None
    distance: int | None = None
    threshold: int | None = None
    colour_distance: int | None = None
    colour_tolerance: int | None = None
    region: list[int] | None = None
    failures: int = 0
    stopped_here: str | None = None
    #: the element the step acted on when it was recorded (``push button 'Save'``)
    element: str | None = None
    #: each time a replay healed this step: how, from where to where (oldest first)
    healed: list[str] = Field(default_factory=list)
    recorded: str | None = None
    live: str | None = None


class StepView(BaseModel):
    """One step: its action, times and frames (URLs), and what is wrong with it."""

    index: int
    kind: str
    label: str
    event: dict[str, Any] | None = None
    #: a drag's way: ``[x, y, seconds since the press]`` points
    path: list[list[float]] | None = None
    timestamp: datetime | None = None
    #: seconds since the artifact started, and until the next step
    t: float | None = None
    duration_s: float | None = None
    frame: str | None = None
    #: the frame's file type (``png``, ``jpg``, ``webp``): a download keeps it
    frame_type: str | None = None
    thumb: str | None = None
    after: str | None = None
    problem: str | None = None
    group: str | None = None
    check: Check | None = None


class VideoView(BaseModel):
    """A video beside the steps: its URL and the instant of its first frame."""

    url: str
    label: str
    started_at: datetime | None = None
    duration_s: float | None = None
    width: int | None = None
    height: int | None = None


class ArtifactView(BaseModel):
    """An artifact as the page shows it."""

    id: str
    kind: ArtifactKind
    title: str
    path: str
    problems: list[Problem] = Field(default_factory=list)
    facts: dict[str, str] = Field(default_factory=dict)
    screen: list[int] | None = None
    started_at: datetime | None = None
    steps: list[StepView] = Field(default_factory=list)
    #: how many steps the artifact has, and where ``steps`` starts among them (a page
    #: of a long artifact holds a slice: ``/api/artifact?offset=...&limit=...``)
    step_count: int = 0
    steps_offset: int = 0
    videos: list[VideoView] = Field(default_factory=list)
    texts: dict[str, str] = Field(default_factory=dict)
    #: the X display the artifact was made on, when it is still running
    live: str | None = None

    def problem(self, message: str, level: Literal["error", "warning"] = "error") -> None:
        self.problems.append(Problem(level=level, message=message))


#: Where a frame's bytes come from: a file (inside the artifact's folder), bytes in
#: memory, or why it is refused or missing.
FrameSource = Path | bytes | str


@dataclass
class LoadedArtifact:
    """An artifact read by a loader: the view, and what is behind its URLs."""

    view: ArtifactView
    frames: dict[tuple[int, str], FrameSource] = field(default_factory=dict)
    videos: list[Path] = field(default_factory=list)
    #: files (and folders) whose change means the artifact must be read again:
    #: path -> (mtime in ns, size), ``MISSING`` for one that was not there
    stamps: dict[str, tuple[int, int]] = field(default_factory=dict)

    def stamp(self, *paths: Path) -> None:
        """Note ``paths`` as they are now, before they are read: a change made while
        (or after) they are read shows as a changed stamp, and the artifact is read
        again. A folder's stamp changes when a file is added, removed or renamed in it."""
        for path in paths:
            self.stamps[str(path)] = stamp_of(path)

    def fresh(self) -> bool:
        """True while every stamped file is as it was when the artifact was read."""
        return all(stamp_of(Path(name)) == stamp for name, stamp in self.stamps.items())

    @property
    def version(self) -> str:
        """A short name of the stamps: it changes when the artifact's files do."""
        digest = hashlib.blake2b(repr(sorted(self.stamps.items())).encode(), digest_size=6)
        return digest.hexdigest()


#: The stamp of a file that is not there.
MISSING = (-1, -1)


def stamp_of(path: Path) -> tuple[int, int]:
    """``(mtime in ns, size)`` of ``path``, :data:`MISSING` when it is not there."""
    try:
        stat = os.stat(path)
    except OSError:
        return MISSING
    return (stat.st_mtime_ns, stat.st_size)


def frame_url(artifact_id: str, step: int, which: FrameKind = "frame", thumb: bool = False) -> str:
    """The address of one of a step's pictures."""
    size = "&size=thumb" if thumb else ""
    return f"/api/frame?id={quote(artifact_id, safe='')}&step={step}&which={which}{size}"


def video_url(artifact_id: str, index: int) -> str:
    return f"/api/video?id={quote(artifact_id, safe='')}&index={index}"


def event_fields(event: Event) -> dict[str, Any]:
    """An event as the page draws it (the manifest's fields, defaults left out)."""
    body = event.model_dump(mode="json", exclude_defaults=True, exclude={"screenshot"})
    body["kind"] = event.kind.value
    if event.button is not None:
        body["button"] = event.button
    return body


def describe(event: Event) -> str:
    """One readable line: ``click (120, 48)``, ``type 'hello'``, ``key ctrl+s``."""
    kind = event.kind.value.replace("_", " ")
    where = f" ({event.position.x}, {event.position.y})" if event.position else ""
    if event.text:
        shown = event.text if len(event.text) <= 40 else event.text[:37] + "..."
        return f"{kind} {shown!r}"
    if event.keys:
        return f"{kind} {'+'.join(event.keys)}"
    if event.start_position is not None and event.position is not None:
        start, end = event.start_position, event.position
        return f"{kind} ({start.x}, {start.y}) → ({end.x}, {end.y})"
    if event.scroll_dx or event.scroll_dy:
        amounts = []
        if event.scroll_dy:
            amounts.append(f"{'down' if event.scroll_dy > 0 else 'up'} {abs(event.scroll_dy)}")
        if event.scroll_dx:
            amounts.append(f"{'right' if event.scroll_dx > 0 else 'left'} {abs(event.scroll_dx)}")
        return f"{kind}{where} {', '.join(amounts)}"
    mods = f" with {'+'.join(event.modifiers)}" if event.modifiers else ""
    return f"{kind}{where}{mods}"


def timeline(view: ArtifactView, start: datetime | None) -> None:
    """Fill in each step's ``t`` (since ``start``) and ``duration_s`` (until the next)."""
    steps = view.steps
    origin = start or next((step.timestamp for step in steps if step.timestamp), None)
    view.started_at = view.started_at or origin
    for number, step in enumerate(steps):
        if step.timestamp is None or origin is None:
            continue
        step.t = round((step.timestamp - origin).total_seconds(), 3)
        following = steps[number + 1].timestamp if number + 1 < len(steps) else None
        if following is not None:
            step.duration_s = round((following - step.timestamp).total_seconds(), 3)
