"""CommandInput: the command line, with history on Up and Down and completion on Tab."""

from __future__ import annotations

from typing import ClassVar

from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input

from viewfinder.tui.completion import ArgumentWords, complete
from viewfinder.tui.history import CommandHistory


class CommandInput(Input):
    """An :class:`~textual.widgets.Input` with a shell's habits.

    Up and Down walk ``history`` (a :class:`~viewfinder.tui.history.CommandHistory`;
    Down past the newest gives back what was being typed). Tab completes the text
    before the cursor (:func:`~viewfinder.tui.completion.complete`, with
    ``argument_words`` for the arguments) and keeps the focus; with several matches it
    posts :class:`CompletionCandidates` for the app to show. On an empty line Tab moves
    the focus, as it does elsewhere. A step or a completion that finds nothing rings
    the bell. Submitting does not touch the history: the app adds what it runs.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history_older", "Older command", show=False),
        Binding("down", "history_newer", "Newer command", show=False),
        Binding("tab", "complete", "Complete", show=False),
    ]

    class CompletionCandidates(Message):
        """Tab found several matches: ``candidates``, as they would be typed."""

        def __init__(self, command_input: CommandInput, candidates: tuple[str, ...]) -> None:
            super().__init__()
            self.command_input = command_input
            self.candidates = candidates

        @property
        def control(self) -> CommandInput:
            return self.command_input

    def __init__(
        self,
        history: CommandHistory,
        argument_words: ArgumentWords,
        *,
        placeholder: str = "",
        id: str | None = None,
    ) -> None:
        super().__init__(placeholder=placeholder, id=id)
        self.history = history
        self.argument_words = argument_words

    def _show_line(self, line: str) -> None:
        self.value = line
        self.cursor_position = len(line)

    def action_history_older(self) -> None:
        line = self.history.older(self.value)
        if line is None:
            self.app.bell()
        else:
            self._show_line(line)

    def action_history_newer(self) -> None:
        line = self.history.newer()
        if line is None:
            self.app.bell()
        else:
            self._show_line(line)

    def action_complete(self) -> None:
        if not self.value.strip():
            raise SkipAction()  # nothing to complete: Tab moves the focus as usual
        cursor = self.cursor_position
        before, after = self.value[:cursor], self.value[cursor:]
        completion = complete(before, self.argument_words)
        if not completion.matched:
            self.app.bell()
            return
        if completion.text != before:
            self.value = completion.text + after
            self.cursor_position = len(completion.text)
        if completion.candidates:
            self.post_message(self.CompletionCandidates(self, completion.candidates))
