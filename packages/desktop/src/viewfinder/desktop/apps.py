"""The apps of a desktop: programs started on its display, each in its own process group.

An app is a command with its arguments (``["python", "form.py"]``). It runs with
``DISPLAY`` set to the desktop's display, in a session and process group of its own, so
:meth:`App.stop` ends it and every process it started at once, and a Ctrl-C in the
caller's terminal does not reach it. Where bubblewrap works it also runs in a PID
namespace of its own (:mod:`~viewfinder.desktop.app_namespace`), so the daemons it
started with ``setsid`` end with it too. Its stdout and stderr go to a log file, whose
end an error quotes.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from viewfinder.core.errors import ViewfinderError
from viewfinder.core.lifetime import popen_dying_with_parent
from viewfinder.desktop.app_namespace import namespace_prefix

T = TypeVar("T")


class DesktopError(ViewfinderError):
    """Base class of the errors of a desktop and its apps."""


class DesktopConfigError(DesktopError, ValueError):
    """A desktop was asked for something that cannot be: a bad size, a malformed app."""


class AppNotFoundError(DesktopError, LookupError):
    """An app's program is not installed (not on PATH, or not an executable file)."""

    def __init__(self, command: Sequence[str], reason: str) -> None:
        self.command = list(command)
        super().__init__(
            f"cannot start app {shlex.join(command)!r}: {reason}. Install it, or give the "
            "full path of the program"
        )


class AppStartError(DesktopError):
    """An app could not be started, or exited before it showed a window."""


class WindowTimeoutError(DesktopError, TimeoutError):
    """An app did not map a window within the time allowed."""


# Apps are started from this one long-lived thread: a parent-death signal fires when the
# *thread* that started the child ends (see viewfinder.core.lifetime), and a desktop may be
# started from a worker thread that ends long before the desktop does.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="viewfinder-desktop-spawner")


def on_spawner_thread(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``function`` (which starts a child that dies with its parent) on the spawner
    thread, which lives as long as this process; its exception propagates."""
    return _spawner.submit(function, *args, **kwargs).result()


#: How long an app may take to show its first window, by default.
WINDOW_TIMEOUT_S = 30.0
#: How long an app has to exit after SIGTERM before its group is killed.
STOP_TIMEOUT_S = 5.0


def parse_command(command: Sequence[str] | str, *, what: str = "app") -> list[str]:
    """A command as a list of words; a string is split as a shell would (no shell runs).

    Raises :class:`DesktopConfigError` for an empty command or one with a non-string word.
    """
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise DesktopConfigError(f"{what} command {command!r} cannot be split: {exc}") from None
    else:
        words = list(command)
    if not words:
        raise DesktopConfigError(f"{what} command is empty; give a program and its arguments")
    bad = [word for word in words if not isinstance(word, str)]
    if bad:
        raise DesktopConfigError(
            f"{what} command {words!r} has words that are not strings: {bad!r}; "
            'write it as a list of strings, e.g. ["python", "form.py"]'
        )
    return words


def find_program(command: Sequence[str], path: str | None = None) -> str:
    """The executable that runs ``command[0]``; :class:`AppNotFoundError` when there is none."""
    program = command[0]
    if os.sep in program:
        if not os.path.isfile(program):
            raise AppNotFoundError(command, f"{program} does not exist")
        if not os.access(program, os.X_OK):
            raise AppNotFoundError(command, f"{program} is not executable")
        return program
    found = shutil.which(program, path=path)
    if found is None:
        raise AppNotFoundError(command, f"no program {program!r} on PATH")
    return found


def process_start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), to tell it from a later process
    that got the same id; None when it does not run."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def group_members(pgid: int) -> set[int]:
    """Live (not zombie) processes in process group ``pgid`` (reads ``/proc``)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended while we looked
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.add(int(entry.name))
    return found


class App:
    """A program running on a desktop's display, leader of its own process group.

    Made by :func:`launch_app`, or by :meth:`adopt` for an app another process started
    (``viewfinder desktop stop`` stops the apps of ``viewfinder desktop start``).
    """

    def __init__(
        self,
        command: Sequence[str],
        pid: int,
        *,
        process: subprocess.Popen[bytes] | None = None,
        log_path: Path | None = None,
        started: int | None = None,
    ) -> None:
        self.command = list(command)
        self.pid = pid
        self.process = process
        self.log_path = log_path
        #: the process's start time (see :func:`process_start_time`), guarding against
        #: signalling a stranger that reused the pid of an app that is long gone
        self.started = started if started is not None else process_start_time(pid)
        #: the app's first window, once :func:`wait_for_window` found it
        self.window: int | None = None
        #: the write end of the pipe whose end ends the app's PID namespace
        #: (see :mod:`viewfinder.desktop.app_namespace`), closed by :meth:`stop`
        self.lifeline: int | None = None

    @classmethod
    def adopt(
        cls, command: Sequence[str], pid: int, started: int | None, log_path: Path | None = None
    ) -> App:
        """An app started elsewhere, known by its pid and start time."""
        return cls(command, pid, log_path=log_path, started=started)

    @property
    def pgid(self) -> int:
        """Its process group (the app leads it)."""
        return self.pid

    @property
    def name(self) -> str:
        """The program's name (``python``, ``chromium``)."""
        return os.path.basename(self.command[0])

    @property
    def returncode(self) -> int | None:
        """Its exit status once it exited (None while it runs, or when not our child)."""
        return self.process.poll() if self.process is not None else None

    def is_running(self) -> bool:
        """True while the app's leading process runs (a zombie does not)."""
        if self.process is not None:
            return self.process.poll() is None
        return self._is_same_process()

    def _is_same_process(self) -> bool:
        now = process_start_time(self.pid)
        if now is None or (self.started is not None and now != self.started):
            return False
        try:
            state = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state != "Z"

    def output_tail(self, limit: int = 2000) -> str:
        """The end of what the app printed (stdout and stderr)."""
        if self.log_path is None:
            return ""
        try:
            return self.log_path.read_text(errors="replace")[-limit:].strip()
        except OSError:
            return ""

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """End the app's process group: SIGTERM, then SIGKILL after ``timeout`` s; reap it.

        Idempotent. Afterwards no process of its group runs.
        """
        if self.process is None and not self._is_same_process() and not group_members(self.pgid):
            self._close_lifeline()
            return  # gone, and the pid may be someone else's by now
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, sig)
            if self._wait_group_gone(wait):
                break
        self._reap()
        self._close_lifeline()

    def _close_lifeline(self) -> None:
        if self.lifeline is not None:
            with contextlib.suppress(OSError):
                os.close(self.lifeline)
            self.lifeline = None

    def _wait_group_gone(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            self._reap()
            if not group_members(self.pgid):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def _reap(self) -> None:
        if self.process is not None:
            self.process.poll()
            return
        # our child when this process started it (an in-process `desktop start`)
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(self.pid, os.WNOHANG)

    def describe(self) -> str:
        """``pid 123: python form.py``."""
        return f"pid {self.pid}: {shlex.join(self.command)}"

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"<App {shlex.join(self.command)!r} pid={self.pid} {state}>"


def launch_app(
    command: Sequence[str] | str,
    *,
    display: str,
    log_dir: Path,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    detached: bool = False,
) -> App:
    """Start ``command`` on X display ``display`` in a process group (and, where
    bubblewrap works, a PID namespace) of its own; the :class:`App`'s pid is then
    bubblewrap's, the leader of that group.

    ``env`` is added to this process's environment; ``DISPLAY`` is set and
    ``XAUTHORITY`` dropped. Output goes to a log file in ``log_dir``. Unless
    ``detached``, the app is killed when this process dies, even by SIGKILL (it is
    started from a thread that lives as long as the process; see
    :mod:`viewfinder.core.lifetime`); a detached app outlives this process.
    Raises :class:`AppNotFoundError` when the program is not installed (before anything
    is started) and :class:`AppStartError` when it cannot be executed.
    """
    words = parse_command(command)
    environment = dict(os.environ)
    environment.update(env or {})
    environment["DISPLAY"] = display
    environment.pop("XAUTHORITY", None)
    executable = find_program(words, environment.get("PATH"))
    log_dir.mkdir(parents=True, exist_ok=True)
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(words[0]))
    log_path = _unused(log_dir, stem or "app")
    try:
        with log_path.open("wb") as log:
            options: dict[str, Any] = dict(
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                cwd=cwd,
                start_new_session=True,
            )
            argv, program = words, executable
            # the namespace's init ends it when this pipe's write end, ours alone (not
            # inheritable), closes: when this process dies, however it dies
            lifeline = None if detached else os.pipe()
            prefix = namespace_prefix(
                environment,
                die_with_parent=not detached,
                lifeline=lifeline[0] if lifeline else None,
            )
            if prefix is not None:  # bwrap looks the program up in the same PATH
                argv, program = [*prefix, *words], prefix[0]
                if lifeline:
                    options["pass_fds"] = (lifeline[0],)
            try:
                if detached:
                    process = subprocess.Popen(argv, executable=program, **options)
                else:
                    process = on_spawner_thread(
                        popen_dying_with_parent, argv, executable=program, **options
                    )
            except BaseException:
                if lifeline:
                    os.close(lifeline[1])
                raise
            finally:
                if lifeline:
                    os.close(lifeline[0])
    except OSError as exc:
        raise AppStartError(
            f"cannot start app {shlex.join(words)!r}: {exc.strerror or exc}"
        ) from exc
    app = App(words, process.pid, process=process, log_path=log_path)
    app.lifeline = lifeline[1] if lifeline and prefix is not None else None
    if lifeline and prefix is None:
        os.close(lifeline[1])
    return app


def _unused(folder: Path, stem: str) -> Path:
    for index in range(1, 10_000):
        path = folder / f"{stem}-{index}.log"
        if not path.exists():
            return path
    raise AppStartError(f"{folder} holds too many app logs; remove some")


__all__ = [
    "App",
    "AppNotFoundError",
    "AppStartError",
    "DesktopConfigError",
    "DesktopError",
    "WindowTimeoutError",
    "find_program",
    "launch_app",
    "parse_command",
]
