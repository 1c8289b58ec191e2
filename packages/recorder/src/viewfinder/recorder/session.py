"""Reading a recorded session: its metadata, its events, and the Trajectory they make."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from viewfinder.core import Screenshot, Trajectory, TrajectoryMetadata, TrajectoryStep
from viewfinder.recorder.errors import SessionFormatError
from viewfinder.recorder.layout import SessionLayout
from viewfinder.recorder.manifest import ManifestEntry, read_manifest
from viewfinder.recorder.metadata import SessionMetadata

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Session:
    """A recorded session as found on disk (frames are not loaded)."""

    layout: SessionLayout
    metadata: SessionMetadata
    entries: list[ManifestEntry]
    torn_bytes: int = 0

    @property
    def root(self) -> Path:
        return self.layout.root

    def frame_path(self, entry: ManifestEntry) -> Path | None:
        """The file of ``entry``'s pre-action frame (None when the line names none)."""
        ref = entry.event.screenshot
        return self.layout.resolve(ref) if ref else None

    def missing_frames(self) -> list[ManifestEntry]:
        """Entries whose frame file is not there."""
        missing = []
        for entry in self.entries:
            path = self.frame_path(entry)
            if path is None or not path.is_file():
                missing.append(entry)
        return missing


def read_session(session_dir: str | os.PathLike[str]) -> Session:
    """Read a session folder's metadata and manifest; :class:`SessionFormatError` if it is
    not a recording or a line cannot be read."""
    layout = SessionLayout(Path(session_dir).expanduser().absolute())
    if not layout.root.is_dir():
        raise SessionFormatError(f"{layout.root} is not a folder; pass a recording's folder")
    if not layout.manifest.exists():
        raise SessionFormatError(
            f"{layout.root} is not a recording: it has no {layout.manifest.name} "
            "(record into it with `viewfinder record --out DIR`)"
        )
    metadata = SessionMetadata.load(layout.metadata)
    manifest = read_manifest(layout.manifest)
    return Session(layout, metadata, manifest.entries, manifest.torn_bytes)


def load_session(session_dir: str | os.PathLike[str], *, frames: bool = True) -> Trajectory:
    """A recorded session as a core Trajectory.

    Steps are the manifest's events in order, each with its pre-action frame as a
    :class:`~viewfinder.core.Screenshot` (``captured_at`` is when its pixels were
    captured); metadata comes from ``metadata.json`` (``source`` is ``"recorder"``;
    backend, input source, interval, platform and the folder are kept as extra fields).
    ``frames=False`` leaves the frames out. A line whose frame file is missing raises
    :class:`SessionFormatError`.
    """
    session = read_session(session_dir)
    meta = session.metadata
    # TrajectoryMetadata allows extra fields: keep where the frames came from.
    trajectory = Trajectory(
        metadata=TrajectoryMetadata.model_validate(
            {
                "source": "recorder",
                "created_at": meta.started_at,
                "screen": meta.screen,
                "session_dir": str(session.root),
                "backend": meta.backend,
                "input_source": meta.input_source,
                "interval_s": meta.interval_s,
                "status": meta.status,
                "platform": meta.platform,
            }
        )
    )
    for entry in session.entries:
        frame = _frame(session, entry, meta.backend) if frames else None
        trajectory.steps.append(TrajectoryStep(event=entry.event, frame=frame))
    return trajectory


def _frame(session: Session, entry: ManifestEntry, source: str) -> Screenshot | None:
    path = session.frame_path(entry)
    if path is None:
        return None
    try:
        data = path.read_bytes()
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        raise SessionFormatError(
            f"{session.layout.manifest} line {entry.line_no} (seq {entry.seq}) names "
            f"{entry.event.screenshot}, which is missing from {session.root}"
        ) from None
    size = png_size(data)
    captured = datetime.fromtimestamp(mtime, UTC)
    if size is None:  # not a PNG we wrote; let the Screenshot model read whatever it is
        return Screenshot.from_bytes(data, source=source).model_copy(
            update={"captured_at": captured}
        )
    return Screenshot(
        data=data,
        format="png",
        width=size[0],
        height=size[1],
        captured_at=captured,
        source=source,
    )


def png_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG's header without decoding it (None if not a PNG)."""
    if len(data) < 24 or not data.startswith(_PNG_SIGNATURE) or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return (width, height)
