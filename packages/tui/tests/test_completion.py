"""Tab completion without Textual: command names, then their first argument."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from viewfinder.tui.commands import COMMANDS
from viewfinder.tui.completion import Completion, complete

IDS = {"kill": ["web", "worker", "1", "10"], "logs": ["web", "done"], "shot": ["display"]}


def words(command: str) -> Sequence[str]:
    return IDS.get(command, [])


@pytest.mark.parametrize(
    ("before", "completion"),
    [
        ("!p", Completion("!ps ")),
        ("!he", Completion("!help ")),
        ("!HE", Completion("!help ")),
        ("  !lo", Completion("  !logs ")),
        # !kill and !kill-all: the common prefix is a command, so it is completed
        ("!ki", Completion("!kill ", ("!kill", "!kill-all"))),
        ("!kill", Completion("!kill ", ("!kill", "!kill-all"))),
        ("!kill-", Completion("!kill-all ")),
        ("!zz", Completion("!zz", matched=False)),
        ("make test", Completion("make test", matched=False)),
        ("", Completion("", matched=False)),
    ],
)
def test_command_names(before: str, completion: Completion) -> None:
    assert complete(before, words) == completion


def test_a_bare_bang_lists_every_command() -> None:
    completion = complete("!", words)
    assert completion.text == "!"
    assert completion.candidates == tuple(f"!{name}" for name in sorted(COMMANDS))


@pytest.mark.parametrize(
    ("before", "completion"),
    [
        ("!kill we", Completion("!kill web ")),
        ("!kill   we", Completion("!kill   web ")),
        ("!KILL we", Completion("!KILL web ")),
        ("!kill w", Completion("!kill w", ("web", "worker"))),
        # ids are not preferred like names: "1" or "10" is still open
        ("!kill 1", Completion("!kill 1", ("1", "10"))),
        ("!kill ", Completion("!kill ", ("1", "10", "web", "worker"))),
        ("!logs d", Completion("!logs done ")),
        ("!kill d", Completion("!kill d", matched=False)),
        ("!shot d", Completion("!shot display ")),
        ("!ps x", Completion("!ps x", matched=False)),
        ("!kill web x", Completion("!kill web x", matched=False)),  # only the first word
        ("!nosuch x", Completion("!nosuch x", matched=False)),
    ],
)
def test_arguments(before: str, completion: Completion) -> None:
    assert complete(before, words) == completion


def test_the_argument_words_are_asked_by_the_commands_name() -> None:
    asked: list[str] = []

    def recording(command: str) -> Sequence[str]:
        asked.append(command)
        return ["a"]

    complete("!LOGS ", recording)
    assert asked == ["logs"]
