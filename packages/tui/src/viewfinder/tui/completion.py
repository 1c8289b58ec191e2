"""Tab completion of the TUI's command line: ``!`` command names and their first argument.

:func:`complete` is plain Python (no Textual): it takes the text before the cursor and a
function giving the words a command's argument can be (the app gives process ids for
``!kill`` and ``!logs``, display and browser for ``!shot``), and says what the text
becomes and which candidates to show.

As in a shell: a unique match is completed and followed by a space; several matches
complete their common prefix and are listed. One exception for command names: when the
common prefix is itself a command (``!ki`` matches ``!kill`` and ``!kill-all``), it is
completed with its space, since that is the likelier one, and the others are listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from viewfinder.tui.commands import COMMANDS

#: Gives the words the argument of command ``name`` (without ``!``) can be.
ArgumentWords = Callable[[str], Sequence[str]]


@dataclass(frozen=True)
class Completion:
    """What Tab does to the text before the cursor.

    ``text`` replaces it (the same text when nothing could be added); ``candidates``
    are the matches to show when there was more than one, as they would be typed.
    ``matched`` is False when nothing matched at all.
    """

    text: str
    candidates: tuple[str, ...] = ()
    matched: bool = True


def complete(before: str, argument_words: ArgumentWords) -> Completion:
    """Complete ``before`` (the command line up to the cursor).

    Completes the command name while there is no space after it, then the first word
    of its argument from ``argument_words(name)``; anything else does not match.
    """
    body = before.lstrip()
    if not body.startswith("!"):
        return Completion(before, matched=False)
    head = before[: len(before) - len(body)] + "!"
    name, space, rest = body[1:].partition(" ")
    if not space:
        return _complete_word(head, name.lower(), sorted(COMMANDS), "!", prefer_exact=True)
    spec = COMMANDS.get(name.lower())
    partial = rest.lstrip(" ")
    if spec is None or " " in partial:
        return Completion(before, matched=False)
    head = before[: len(before) - len(partial)]
    return _complete_word(head, partial, argument_words(spec.name), "", prefer_exact=False)


def _complete_word(
    head: str, partial: str, words: Sequence[str], shown_prefix: str, *, prefer_exact: bool
) -> Completion:
    matches = sorted({word for word in words if word.startswith(partial)})
    if not matches:
        return Completion(head + partial, matched=False)
    if len(matches) == 1:
        return Completion(f"{head}{matches[0]} ")
    common = _common_prefix(matches)
    shown = tuple(shown_prefix + match for match in matches)
    if prefer_exact and common in matches:
        return Completion(f"{head}{common} ", shown)
    return Completion(head + common, shown)


def _common_prefix(words: Sequence[str]) -> str:
    # The first and last in sorted order differ earliest; the others lie between.
    first, last = min(words), max(words)
    length = 0
    while length < len(first) and first[length] == last[length]:
        length += 1
    return first[:length]
