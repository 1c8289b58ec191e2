"""Errors of the process manager, the environment, its configuration and the TUI commands.

All derive from core's :class:`~viewfinder.core.ViewfinderError`; most also from the
built-in a Python programmer would expect (``LookupError`` for an unknown id,
``FileNotFoundError`` for a missing program, ``ValueError`` for bad input).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from viewfinder.core import ViewfinderError


class ProcessError(ViewfinderError):
    """Base of the errors the :class:`~viewfinder.tui.ProcessManager` raises."""


class CommandNotFoundError(ProcessError, FileNotFoundError):
    """The program to spawn does not exist or is not executable."""

    def __init__(self, command: str, reason: str = "not found on PATH") -> None:
        self.command = command
        super().__init__(
            f"cannot run {command!r}: {reason}. Check the spelling, install the program, "
            "or give its full path."
        )


class SpawnError(ProcessError):
    """The operating system refused to start a process (bad working directory, ...)."""


class UnknownProcessError(ProcessError, LookupError):
    """No process has the id asked for."""

    def __init__(self, process_id: str, known: Iterable[str]) -> None:
        self.process_id = process_id
        self.known = sorted(known)
        listed = ", ".join(self.known) or "none yet"
        super().__init__(
            f"no process with id {process_id!r}; known ids: {listed}. "
            "`!ps` (or list_processes()) shows them."
        )


class DuplicateProcessError(ProcessError, ValueError):
    """A running process already has the id given to spawn()."""

    def __init__(self, process_id: str) -> None:
        self.process_id = process_id
        super().__init__(
            f"a running process already has id {process_id!r}; pick another id or kill it first"
        )


class ConfigError(ViewfinderError, ValueError):
    """The configuration file is missing, not TOML, or has a bad key or value."""

    def __init__(self, path: Path | str, problem: str, key: str | None = None) -> None:
        self.path = Path(path)
        self.key = key
        self.problem = problem
        where = f"{self.path}: {key}: " if key else f"{self.path}: "
        super().__init__(f"{where}{problem}")


class TuiCommandError(ViewfinderError, ValueError):
    """A ``!`` command typed in the TUI is unknown or misses its argument."""


class UnknownCommandError(TuiCommandError):
    """A ``!`` command that does not exist."""

    def __init__(self, name: str, suggestion: str | None = None) -> None:
        self.name = name
        self.suggestion = suggestion
        hint = f" Did you mean !{suggestion}?" if suggestion else ""
        super().__init__(f"unknown command !{name}.{hint} Type !help for the list.")


class NothingToCaptureError(ViewfinderError):
    """``!shot`` was asked for but there is no display, browser or capture backend."""


class HistoryFileError(ViewfinderError):
    """The command history file cannot be written; the history goes on in memory."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(
            f"cannot save the command history to {path} ({reason}); "
            "commands of this session are kept in memory only"
        )
