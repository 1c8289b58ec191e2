"""Long-lived displays: started detached, recorded in a state directory, stopped by name.

``viewfinder display start`` starts an Xvfb that outlives the command and writes a
JSON record per display into the state directory (``$VIEWFINDER_STATE_DIR``, else
``$XDG_STATE_HOME/viewfinder/displays``, else ``~/.local/state/viewfinder/displays``).
Other processes find a display's framebuffer file through that record, so
:class:`~viewfinder.xvfb.backend.XvfbBackend` for ``":N"`` reads shared memory too.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from viewfinder.core.errors import OutputPathError
from viewfinder.xvfb import server
from viewfinder.xvfb.errors import DisplayNotFoundError

STATE_DIR_ENV = "VIEWFINDER_STATE_DIR"

# Detached Xvfbs started by this process stay our children until we exit: keep their
# Popen objects so they are reaped on stop and never garbage-collected while running.
_children: dict[int, subprocess.Popen[bytes]] = {}


def state_dir() -> Path:
    """The directory holding display records (not created here)."""
    explicit = os.environ.get(STATE_DIR_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "viewfinder" / "displays"


@dataclass(frozen=True)
class DisplayRecord:
    """One display started by ``viewfinder display start``."""

    number: int
    pid: int
    width: int
    height: int
    depth: int
    fbdir: str
    log: str
    started_at: str

    @property
    def name(self) -> str:
        return f":{self.number}"

    @property
    def size(self) -> str:
        return f"{self.width}x{self.height}"

    @property
    def framebuffer_path(self) -> Path:
        return Path(self.fbdir) / server.FRAMEBUFFER_FILE

    def is_alive(self) -> bool:
        """True while the recorded Xvfb process runs."""
        return server.pid_alive(self.pid) and server.is_xvfb(self.pid)

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "name": self.name, "alive": self.is_alive()}


def parse_display_number(name: str | int) -> int:
    """``":3"``, ``"3"``, ``":3.0"`` or ``3`` -> 3; ``ValueError`` for anything else."""
    if isinstance(name, int):
        return name
    text = name.strip()
    if text.startswith(":"):
        text = text[1:]
    text = text.split(".", 1)[0]
    if not text.isdigit():
        raise ValueError(f"{name!r} is not a local display name; write it as :N (e.g. :99)")
    return int(text)


def _record_path(number: int) -> Path:
    return state_dir() / f"display-{number}.json"


def _write(record: DisplayRecord) -> None:
    path = _record_path(record.number)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(asdict(record), indent=2) + "\n")
    os.replace(tmp, path)  # readers never see half a record


def _read(path: Path) -> DisplayRecord | None:
    try:
        return DisplayRecord(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def start_display(
    width: int = 1280,
    height: int = 800,
    depth: int = 24,
    *,
    dpi: int | None = None,
    extra_args: Sequence[str] = (),
    timeout: float = 20.0,
) -> DisplayRecord:
    """Start a detached Xvfb that outlives this process and record it; return the record.

    Ready exactly as a :class:`~viewfinder.xvfb.display.Display` is: when Xvfb writes
    its number to ``-displayfd``. Its framebuffer directory is made under the state
    directory, so every process that reads the record can map it.
    """
    server.xvfb_binary()
    args = server.screen_args(width, height, depth, dpi)
    directory = state_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fbdir = Path(tempfile.mkdtemp(prefix="xvfb-", dir=directory))
    except OSError as exc:
        raise OutputPathError(
            directory,
            f"{exc.strerror or exc} (the display records live there; set "
            f"{STATE_DIR_ENV} to a folder you can write)",
        ) from exc
    log_path = fbdir / "xvfb.log"
    try:
        launched = server.launch(
            [*args, *extra_args, "-fbdir", str(fbdir), *server.COMMON_ARGS],
            log_path=log_path,
            timeout=timeout,
            detached=True,
        )
    except BaseException:
        shutil.rmtree(fbdir, ignore_errors=True)
        raise
    _children[launched.process.pid] = launched.process
    record = DisplayRecord(
        number=launched.number,
        pid=launched.process.pid,
        width=width,
        height=height,
        depth=depth,
        fbdir=str(fbdir),
        log=str(log_path),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    _write(record)
    return record


def list_displays(*, prune: bool = True) -> list[DisplayRecord]:
    """Every recorded display, by number; with ``prune``, dead ones' files are removed.

    Dead displays are still returned (once) so a listing can show them as gone.
    """
    directory = state_dir()
    if not directory.is_dir():
        return []
    records = []
    for path in sorted(directory.glob("display-*.json")):
        record = _read(path)
        if record is None:
            continue
        records.append(record)
        if prune and not record.is_alive():
            _remove(record)
    return sorted(records, key=lambda record: record.number)


def find_display(name: str | int) -> DisplayRecord | None:
    """The record of display ``name`` (``":N"``), or None when it has none."""
    try:
        number = parse_display_number(name)
    except ValueError:
        return None
    return _read(_record_path(number))


def stop_display(name: str | int, *, timeout: float = 5.0) -> DisplayRecord:
    """Stop a recorded display and remove its socket, lock file, framebuffer and record.

    Raises :class:`~viewfinder.xvfb.errors.DisplayNotFoundError` for a display with no
    record (one this registry did not start).
    """
    record = find_display(name)
    if record is None:
        shown = f":{name}" if isinstance(name, int) or name.isdigit() else name
        raise DisplayNotFoundError(
            f"no display {shown} was started by viewfinder (no record in {state_dir()}); "
            "`viewfinder display list` shows the ones that were"
        )
    if record.is_alive():
        child = _children.get(record.pid)
        server.stop_server(record.pid, record.number, child=child, timeout=timeout)
    _remove(record)
    return record


def stop_all_displays(*, timeout: float = 5.0) -> list[DisplayRecord]:
    """Stop every recorded display; return their records."""
    return [stop_display(record.number, timeout=timeout) for record in list_displays(prune=False)]


def _remove(record: DisplayRecord) -> None:
    child = _children.pop(record.pid, None)
    if child is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=0.5)  # reap it, so no zombie keeps the pid
    server.remove_display_files(record.number, record.pid)
    shutil.rmtree(record.fbdir, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        _record_path(record.number).unlink()
