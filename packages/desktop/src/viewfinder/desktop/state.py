"""Long-lived desktops: what ``viewfinder desktop start`` leaves running, and stopping it.

A desktop started from the command line outlives the command: its display is a
detached Xvfb recorded by :mod:`viewfinder.xvfb.registry`, and its apps run in sessions
of their own. Beside the display's record (in the same state folder,
``$VIEWFINDER_STATE_DIR``, else ``$XDG_STATE_HOME/viewfinder/displays``) a
``desktop-N.json`` names every app with its pid, process group and start time, so
``viewfinder desktop stop :N`` ends exactly those, even from another shell, and never a
process that later got one of their pids.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from viewfinder.core.errors import OutputPathError
from viewfinder.desktop.apps import (
    STOP_TIMEOUT_S,
    WINDOW_TIMEOUT_S,
    App,
    DesktopError,
    find_program,
    launch_app,
    parse_command,
)
from viewfinder.desktop.windows import wait_for_window
from viewfinder.xvfb import registry
from viewfinder.xvfb.errors import DisplayNotFoundError


class DesktopNotFoundError(DesktopError, LookupError):
    """No desktop was started on that display by ``viewfinder desktop start``."""


@dataclass(frozen=True)
class AppRecord:
    """One app of a long-lived desktop: its command, pid (= process group) and start time."""

    command: list[str]
    pid: int
    started: int | None
    log: str | None = None

    def app(self) -> App:
        """The app as an :class:`~viewfinder.desktop.apps.App` that can be stopped."""
        return App.adopt(self.command, self.pid, self.started, Path(self.log) if self.log else None)


@dataclass(frozen=True)
class DesktopRecord:
    """A desktop started by ``viewfinder desktop start``."""

    number: int
    width: int
    height: int
    folder: str
    started_at: str
    apps: list[AppRecord] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f":{self.number}"

    @property
    def size(self) -> str:
        return f"{self.width}x{self.height}"

    def display_alive(self) -> bool:
        """True while the desktop's Xvfb runs."""
        display = registry.find_display(self.number)
        return display is not None and display.is_alive()

    def running_apps(self) -> list[AppRecord]:
        """The apps that still run."""
        return [app for app in self.apps if app.app().is_running()]

    def to_dict(self) -> dict[str, object]:
        return {
            **asdict(self),
            "name": self.name,
            "alive": self.display_alive(),
            "running_apps": len(self.running_apps()),
        }


def record_path(number: int) -> Path:
    """Where the record of the desktop on display ``number`` lives."""
    return registry.state_dir() / f"desktop-{number}.json"


def _write(record: DesktopRecord) -> None:
    path = record_path(record.number)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(asdict(record), indent=2) + "\n")
    os.replace(tmp, path)  # readers never see half a record


def _read(path: Path) -> DesktopRecord | None:
    try:
        data = json.loads(path.read_text())
        data["apps"] = [AppRecord(**app) for app in data.get("apps", [])]
        return DesktopRecord(**data)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def find_desktop(name: str | int) -> DesktopRecord | None:
    """The record of the desktop on display ``name`` (``":N"``), or None."""
    try:
        number = registry.parse_display_number(name)
    except ValueError:
        return None
    return _read(record_path(number))


def list_desktops() -> list[DesktopRecord]:
    """Every recorded desktop, by display number."""
    directory = registry.state_dir()
    if not directory.is_dir():
        return []
    records = [_read(path) for path in directory.glob("desktop-*.json")]
    return sorted((r for r in records if r is not None), key=lambda record: record.number)


def start_desktop(
    width: int,
    height: int,
    apps: Sequence[Sequence[str] | str] = (),
    *,
    wait_for_windows: bool = True,
    window_timeout: float = WINDOW_TIMEOUT_S,
    accessibility: bool = False,
) -> DesktopRecord:
    """Start a detached display and ``apps`` on it, all outliving this process; record them.

    ``accessibility`` starts the display's accessibility buses first (they end with the
    display) and gives the apps their environment, so their elements can be read.

    The display is ready and, with ``wait_for_windows``, every app has mapped a window
    when this returns. When anything fails, what was started is stopped again.
    """
    commands = [parse_command(app) for app in apps]
    for command in commands:  # a program that is not installed fails before anything starts
        find_program(command, os.environ.get("PATH"))
    display = registry.start_display(width, height)
    started: list[App] = []
    folder: Path | None = None
    try:
        try:
            folder = Path(
                tempfile.mkdtemp(prefix=f"desktop-{display.number}-", dir=registry.state_dir())
            )
        except OSError as exc:
            raise OutputPathError(registry.state_dir(), str(exc.strerror or exc)) from exc
        # recorded from the start and after every app: a `desktop start` killed while
        # it waits for a window leaves a record `desktop stop --all` finds
        record = DesktopRecord(
            number=display.number,
            width=width,
            height=height,
            folder=str(folder),
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
            apps=[],
        )
        _write(record)
        env: dict[str, str] = {}
        if accessibility:
            from viewfinder.xvfb.display_buses import start_buses

            env = start_buses(display.name, display.fbdir)
        for command in commands:
            app = launch_app(command, display=display.name, log_dir=folder, env=env, detached=True)
            started.append(app)
            record.apps.append(AppRecord(app.command, app.pid, app.started, str(app.log_path)))
            _write(record)
        if wait_for_windows:
            for app in started:
                wait_for_window(app, display.name, window_timeout)
    except BaseException:
        for app in reversed(started):
            app.stop()
        registry.stop_display(display.number)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            record_path(display.number).unlink()
        raise
    return record


def stop_desktop(name: str | int, *, timeout: float = STOP_TIMEOUT_S) -> DesktopRecord:
    """Stop every app of the desktop on ``name``, then its display; remove its record.

    Raises :class:`DesktopNotFoundError` when no desktop was started there.
    """
    record = find_desktop(name)
    if record is None:
        shown = f":{name}" if isinstance(name, int) or str(name).isdigit() else name
        raise DesktopNotFoundError(
            f"no desktop {shown} was started by viewfinder (no record in "
            f"{registry.state_dir()}); `viewfinder desktop list` shows the ones that were"
            + (
                "; a display started with `viewfinder display start` stops with "
                "`viewfinder display stop`"
                if registry.find_display(name) is not None
                else ""
            )
        )
    for app in reversed(record.apps):
        app.app().stop(timeout)
    with contextlib.suppress(DisplayNotFoundError):
        registry.stop_display(record.number, timeout=timeout)
    shutil.rmtree(record.folder, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        record_path(record.number).unlink()
    return record


def stop_all_desktops(*, timeout: float = STOP_TIMEOUT_S) -> list[DesktopRecord]:
    """Stop every recorded desktop; return their records."""
    return [stop_desktop(record.number, timeout=timeout) for record in list_desktops()]
