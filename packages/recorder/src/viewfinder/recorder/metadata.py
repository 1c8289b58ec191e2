"""``metadata.json``: what was recorded, with what, where and when."""

from __future__ import annotations

import contextlib
import getpass
import os
import platform
import socket
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from viewfinder.core import ScreenSize
from viewfinder.recorder.durable import write_atomic
from viewfinder.recorder.errors import SessionFormatError

FORMAT = "viewfinder-recording"
Status = Literal["recording", "stopped", "failed"]


class RecordingRun(BaseModel):
    """One start-to-stop stretch of a session (a resumed session has several)."""

    model_config = ConfigDict(extra="allow")

    started_at: datetime
    stopped_at: datetime | None = None
    first_seq: int = 0
    events: int = 0
    backend: str
    input_source: str
    error: str | None = None
    #: where pointer actions' elements came from (``{"source": "atspi", "reads": ...}``),
    #: or ``{"source": null, "reason": ...}``; absent in sessions recorded before elements
    elements: dict[str, Any] | None = None


class SessionMetadata(BaseModel):
    """The contents of ``metadata.json``.

    ``status`` is ``recording`` while a recorder writes the folder; a folder left with
    ``recording`` after the recorder is gone was not stopped cleanly (killed, power
    loss), which is harmless: every manifest line and the frame it references are whole.
    """

    model_config = ConfigDict(extra="allow")

    format: str = FORMAT
    version: int = 1
    screen: ScreenSize
    backend: str
    backend_options: dict[str, Any] = Field(default_factory=dict)
    input_source: str
    interval_s: float
    started_at: datetime
    stopped_at: datetime | None = None
    status: Status = "recording"
    error: str | None = None
    events: int = 0
    platform: dict[str, str] = Field(default_factory=dict)
    runs: list[RecordingRun] = Field(default_factory=list)

    def save(self, path: Path, *, fsync: bool = True) -> None:
        write_atomic(path, (self.model_dump_json(indent=2) + "\n").encode(), fsync=fsync)

    @classmethod
    def load(cls, path: Path) -> SessionMetadata:
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            raise SessionFormatError(
                f"{path.parent} is not a recording: it has no {path.name}"
            ) from None
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise SessionFormatError(f"{path} is not valid recording metadata: {exc}") from exc


def platform_facts(display: str | None = None) -> dict[str, str]:
    """Where the recording was made: OS, machine, Python, host, user, display."""
    facts = {
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "hostname": socket.gethostname(),
    }
    with contextlib.suppress(KeyError, OSError):  # no passwd entry in some containers
        facts["user"] = getpass.getuser()
    shown = display or os.environ.get("DISPLAY")
    if shown:
        facts["display"] = shown
    return facts
