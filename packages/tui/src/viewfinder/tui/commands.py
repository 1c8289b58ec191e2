"""The ``!`` commands typed into the TUI: their names, help and parsing.

Tab completion of these names and of their arguments is in
:mod:`viewfinder.tui.completion`.
"""

from __future__ import annotations

import difflib
import shlex
from dataclasses import dataclass

from viewfinder.tui.errors import TuiCommandError, UnknownCommandError
from viewfinder.tui.log_search import LogSearch


@dataclass(frozen=True)
class CommandSpec:
    """One command: its name, what it takes, what it does, and its key."""

    name: str
    usage: str
    summary: str
    key: str
    needs_argument: bool = False


COMMANDS: dict[str, CommandSpec] = {
    spec.name: spec
    for spec in (
        CommandSpec("ps", "!ps", "list the processes", "f2"),
        CommandSpec(
            "logs", "!logs ID [/TEXT]", "show the output of process ID in the log", "f3", True
        ),
        CommandSpec("run", "!run COMMAND [ARGS...]", "start a process", "f5", True),
        CommandSpec("kill", "!kill ID", "kill process ID and its children", "f8", True),
        CommandSpec("kill-all", "!kill-all", "kill every process", "f9"),
        CommandSpec(
            "shot", "!shot [display|browser]", "capture the screen, show and save it", "f4"
        ),
        CommandSpec("open", "!open URL", "load URL in the environment's browser", "", True),
        CommandSpec("help", "!help", "show this help", "f1"),
    )
}


@dataclass(frozen=True)
class Command:
    """A parsed ``!`` command: its name and the rest of the line."""

    name: str
    argument: str = ""

    def words(self) -> list[str]:
        """The argument split like a shell would (quotes respected)."""
        try:
            return shlex.split(self.argument)
        except ValueError as exc:
            raise TuiCommandError(f"!{self.name}: {exc}; close the quote") from None


def parse_command(line: str) -> Command:
    """Parse ``!name argument`` into a :class:`Command`.

    Raises :class:`UnknownCommandError` (with the closest name as a suggestion) and
    :class:`TuiCommandError` for a line that is not a command or misses its argument.
    """
    text = line.strip()
    if not text.startswith("!"):
        raise TuiCommandError(
            f"{text!r} is not a command: commands start with '!'. "
            f"To start it as a process, type !run {text}"
            if text
            else "type a command, e.g. !help"
        )
    name, _, argument = text[1:].partition(" ")
    name, argument = name.lower(), argument.strip()
    spec = COMMANDS.get(name)
    if spec is None:
        close = difflib.get_close_matches(name, COMMANDS, n=1)
        raise UnknownCommandError(name, close[0] if close else None)
    if spec.needs_argument and not argument:
        raise TuiCommandError(f"!{name} needs an argument: {spec.usage}")
    return Command(name, argument)


def help_rows() -> list[tuple[str, str, str]]:
    """(usage, key, summary) for every command, then the quit key."""
    rows = [(spec.usage, spec.key.upper(), spec.summary) for spec in COMMANDS.values()]
    rows.append(("", "^Q", "quit (kills every process)"))
    return rows


def parse_logs_argument(argument: str) -> tuple[str, LogSearch | None]:
    """Split the argument of ``!logs`` into the process id and the search, if any.

    ``ID``, ``ID /TEXT`` or ``ID --grep TEXT``, with ``--case`` before the search to
    match the case exactly. TEXT is the rest of the line as typed (one pair of quotes
    around it is removed). :class:`TuiCommandError` says what else it takes.
    """
    process_id, _, rest = argument.strip().partition(" ")
    rest = rest.lstrip()
    case_sensitive = _takes_option(rest, "--case")
    if case_sensitive:
        rest = rest.removeprefix("--case").lstrip()
    if rest.startswith("/"):
        text = rest[1:]
    elif _takes_option(rest, "--grep"):
        text = rest.removeprefix("--grep").strip()
    elif rest:
        raise TuiCommandError(
            f"!logs takes ID, then /TEXT or --grep TEXT for only the lines with TEXT, not {rest!r}"
        )
    else:
        if case_sensitive:
            raise TuiCommandError("--case goes with a search: !logs ID --case /TEXT")
        return process_id, None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if not text:
        raise TuiCommandError("nothing to look for: !logs ID /TEXT shows the lines with TEXT")
    return process_id, LogSearch(text, case_sensitive=case_sensitive)


def _takes_option(rest: str, option: str) -> bool:
    return rest == option or rest.startswith(option + " ")
