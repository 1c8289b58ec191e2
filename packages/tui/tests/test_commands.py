"""Parsing the ! commands typed into the TUI."""

from __future__ import annotations

import pytest

from viewfinder.tui import TuiCommandError, UnknownCommandError
from viewfinder.tui.commands import COMMANDS, Command, help_rows, parse_command


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("!ps", Command("ps")),
        ("  !PS  ", Command("ps")),
        ("!kill 3", Command("kill", "3")),
        ("!kill-all", Command("kill-all")),
        ("!run python -m http.server 8000", Command("run", "python -m http.server 8000")),
        ("!shot browser", Command("shot", "browser")),
        ("!logs web", Command("logs", "web")),
        ("!help", Command("help")),
    ],
)
def test_parse(line: str, command: Command) -> None:
    assert parse_command(line) == command


def test_words_respect_quotes() -> None:
    assert parse_command("!run sh -c 'echo a b'").words() == ["sh", "-c", "echo a b"]
    with pytest.raises(TuiCommandError, match="close the quote"):
        parse_command("!run sh -c 'echo").words()


def test_unknown_command_suggests_the_closest() -> None:
    with pytest.raises(UnknownCommandError, match=r"unknown command !kil\. Did you mean !kill\?"):
        parse_command("!kil 3")
    with pytest.raises(UnknownCommandError) as caught:
        parse_command("!zzzz")
    assert caught.value.suggestion is None and "Type !help" in str(caught.value)


def test_missing_argument_and_plain_text() -> None:
    with pytest.raises(TuiCommandError, match=r"!kill needs an argument: !kill ID"):
        parse_command("!kill")
    with pytest.raises(TuiCommandError, match=r"type !run make test"):
        parse_command("make test")
    with pytest.raises(TuiCommandError, match="type a command"):
        parse_command("   ")


def test_help_covers_every_command() -> None:
    usages = [row[0] for row in help_rows()]
    assert all(spec.usage in usages for spec in COMMANDS.values())
