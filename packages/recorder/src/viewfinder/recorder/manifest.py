"""``manifest.jsonl``: one event per line, each referencing its frozen pre-action frame.

A line is core's :meth:`viewfinder.core.Event.to_manifest` as compact JSON::

    {"seq":0,"kind":"click","position":{"x":120,"y":48},"button":"left",
     "timestamp":"2025-01-05T10:00:01.250000Z","screenshot":"screenshots/0.png"}

Lines are appended with one ``write`` each and ``fsync``-ed before the next action is
handled, so after a crash every line is whole. A failed write is cut back off the file
(``ftruncate``), so a full disk cannot leave half a line behind.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewfinder.core import Event, EventFormatError
from viewfinder.recorder.durable import fsync_folder, write_whole
from viewfinder.recorder.errors import SessionFormatError, SessionWriteError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ManifestEntry:
    """One line of a manifest: its sequence number, the event and the line number (1-based)."""

    seq: int
    event: Event
    line_no: int


@dataclass
class Manifest:
    """The whole lines of a manifest, plus the size of a torn last line if there was one."""

    entries: list[ManifestEntry] = field(default_factory=list)
    whole_bytes: int = 0
    torn_bytes: int = 0

    @property
    def next_seq(self) -> int:
        return self.entries[-1].seq + 1 if self.entries else 0


def parse_line(text: str, line_no: int, path: Path) -> ManifestEntry:
    """Read one manifest line; :class:`SessionFormatError` naming the line when it is bad."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionFormatError(
            f"{path} line {line_no} is not JSON ({exc}): {text[:120]!r}"
        ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("seq"), int):
        raise SessionFormatError(
            f"{path} line {line_no} is not a manifest event (an object with an integer 'seq')"
        )
    try:
        event = Event.from_manifest(data)
    except EventFormatError as exc:
        raise SessionFormatError(f"{path} line {line_no}: {exc}") from exc
    return ManifestEntry(seq=data["seq"], event=event, line_no=line_no)


def read_manifest(path: Path) -> Manifest:
    """Read every line of the manifest at ``path`` (an absent file reads as empty).

    A last line without its newline can only come from a power cut while it was being
    written (the recorder writes lines whole); it is left out and reported in
    ``torn_bytes``. Any other bad line raises :class:`SessionFormatError`.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Manifest()
    manifest = Manifest()
    whole, newline, tail = raw.rpartition(b"\n")
    if tail.strip():
        manifest.torn_bytes = len(tail)
        log.warning("%s ends in a torn line of %d bytes; ignoring it", path, len(tail))
    manifest.whole_bytes = len(whole) + len(newline)
    previous = -1
    for line_no, line in enumerate(whole.split(b"\n") if whole else [], start=1):
        if not line.strip():
            continue
        entry = parse_line(line.decode("utf-8", errors="replace"), line_no, path)
        if entry.seq <= previous:
            raise SessionFormatError(
                f"{path} line {line_no} has seq {entry.seq} after seq {previous}; "
                "sequence numbers must increase"
            )
        previous = entry.seq
        manifest.entries.append(entry)
    return manifest


class ManifestWriter:
    """Appends events to a manifest, each line whole and (with ``fsync``) on disk."""

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync
        created = not path.exists()
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
            if created and fsync:
                fsync_folder(path.parent)
        except OSError as exc:
            raise SessionWriteError(path, exc) from exc

    def append(self, seq: int, event: Event, extra: dict[str, Any] | None = None) -> None:
        """Write ``event`` as line ``seq``; the line is whole on disk when this returns.

        ``extra`` adds keys an Event does not have (a drag's ``path``); readers that do not
        know them skip them.
        """
        if self._fd is None:
            raise SessionWriteError(self.path, OSError(9, "the manifest is closed"))
        body = {**event.to_manifest(seq), **(extra or {})}
        line = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        data = (line + "\n").encode("utf-8")
        try:
            write_whole(self._fd, data)
            if self.fsync:
                os.fsync(self._fd)
        except OSError as exc:
            # Take back whatever part of the line made it, so the file stays whole lines.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
            raise SessionWriteError(self.path, exc) from exc
        self._size += len(data)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def cut_torn_tail(path: Path, manifest: Manifest) -> None:
    """Remove a torn last line (see :func:`read_manifest`) before appending to the file."""
    if manifest.torn_bytes:
        try:
            os.truncate(path, manifest.whole_bytes)
        except OSError as exc:
            raise SessionWriteError(path, exc) from exc
