"""The command history of the TUI's command line: walked with Up and Down, kept in a file.

:class:`CommandHistory` is plain Python (no Textual), so it is tested on its own. It
works as readline does: :meth:`~CommandHistory.older` (Up) steps to older commands,
:meth:`~CommandHistory.newer` (Down) back, and Down past the newest gives back what was
being typed before the walk began.

The file (``~/.config/viewfinder/history`` for ``viewfinder tui``, see
:func:`~viewfinder.tui.config.default_history_path`) is UTF-8 text, one command a
line, newest last, readable only by its owner. Each command is appended as it is run,
so several TUIs at once all add theirs; once the file holds twice ``max_entries`` lines
it is rewritten (atomically) with the newest ``max_entries``. Blank lines, a repeat of
the command just before, and lines typed with a leading space (bash's ``ignorespace``,
for a command with a secret in it) are not kept.

A history file that cannot be read is never a reason not to start: :meth:`load` gives
an empty history and says why in :attr:`~CommandHistory.problem`. One that is not UTF-8
text is moved aside to ``history.bad`` and a new one started; one that cannot be read at
all (permissions, a folder in its place) is left alone and nothing is saved.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from viewfinder.tui.errors import HistoryFileError
from viewfinder.tui.output import terminal_safe

#: Commands kept when no other limit is given (``[tui] history_size``).
DEFAULT_MAX_ENTRIES = 1000


class CommandHistory:
    """The commands run in the TUI, oldest first, and a readline-like walk through them.

    ``entries`` seed the history (cleaned and capped like added ones). With ``path``
    every added command is also appended to that file; build one from an existing file
    with :meth:`load`. At most ``max_entries`` commands are kept (0 keeps none).
    """

    def __init__(
        self,
        entries: Iterable[str] = (),
        *,
        path: str | os.PathLike[str] | None = None,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        if max_entries < 0:
            raise ValueError(f"max_entries must be 0 or more, not {max_entries}")
        self.max_entries = max_entries
        #: The file commands are saved to; None when they are kept in memory only.
        self.path = Path(path) if path is not None else None
        #: Why the file given to :meth:`load` was ignored (to tell the user), else None.
        self.problem: str | None = None
        self._entries: list[str] = []
        self._file_lines = 0  # lines in the file, to know when to rewrite it
        self._file_needs_newline = False  # its last line has no newline
        self._position: int | None = None  # index in _entries while walking
        self._draft = ""
        for entry in entries:
            text = _clean(entry)
            if text is not None:
                self._remember(text)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, max_entries: int = DEFAULT_MAX_ENTRIES
    ) -> CommandHistory:
        """The history kept in ``path`` (none yet if it does not exist), saving to it.

        Never raises for a bad file: see :attr:`problem`.
        """
        history = cls(path=path, max_entries=max_entries)
        file = Path(path)
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            return history
        except OSError as exc:
            history.path = None
            history.problem = (
                f"cannot read the command history {file} ({exc.strerror or exc}); "
                "the commands of this session are not saved"
            )
            return history
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            history._set_aside(f"it is not UTF-8 text ({exc.reason} at byte {exc.start})")
            return history
        if "\0" in text:
            history._set_aside("it holds NUL bytes, so it is not a text file")
            return history
        lines = text.split("\n")
        history._file_needs_newline = lines[-1] != ""
        if not history._file_needs_newline:
            lines.pop()
        history._file_lines = len(lines)
        for line in lines:
            cleaned = _clean(line)
            if cleaned is not None:
                history._remember(cleaned)
        return history

    def _set_aside(self, reason: str) -> None:
        assert self.path is not None
        file = self.path
        aside = file.with_name(file.name + ".bad")
        try:
            os.replace(file, aside)
        except OSError as exc:
            self.path = None
            self.problem = (
                f"ignored the command history {file}: {reason}; it could not be moved "
                f"aside ({exc.strerror or exc}), so the commands of this session are not saved"
            )
            return
        self.problem = (
            f"ignored the command history {file}: {reason}; "
            f"moved it to {aside} and started a new one"
        )

    # -- what is kept ----------------------------------------------------------------

    @property
    def entries(self) -> tuple[str, ...]:
        """The commands kept, oldest first."""
        return tuple(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, line: str) -> bool:
        """Remember ``line`` as the newest command (and append it to the file).

        Ends any walk. Returns whether it was kept: blank lines, a repeat of the newest
        command and lines starting with a space are not. Raises
        :class:`~viewfinder.tui.errors.HistoryFileError` if the file cannot be written;
        the command is kept in memory all the same and later ones are not saved.
        """
        self.reset_walk()
        if line[:1].isspace() or self.max_entries == 0:
            return False
        text = _clean(line)
        if text is None or not self._remember(text):
            return False
        if self.path is not None:
            self._save(self.path, text)
        return True

    def _remember(self, text: str) -> bool:
        if self._entries and self._entries[-1] == text:
            return False
        self._entries.append(text)
        if len(self._entries) > self.max_entries:
            del self._entries[: len(self._entries) - self.max_entries]
        return True

    def _save(self, file: Path, text: str) -> None:
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            if self._file_lines + 1 > 2 * self.max_entries:
                self._rewrite(file)
            else:
                self._append(file, text)
        except OSError as exc:
            self.path = None
            raise HistoryFileError(file, exc.strerror or str(exc)) from exc

    def _append(self, file: Path, text: str) -> None:
        start = "\n" if self._file_needs_newline else ""
        # One write of a whole line with O_APPEND: other TUIs appending at the same
        # time do not cut into it.
        with open(file, "a", encoding="utf-8", opener=_private) as stream:
            stream.write(f"{start}{text}\n")
        self._file_needs_newline = False
        self._file_lines += 1

    def _rewrite(self, file: Path) -> None:
        handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.")
        try:
            with open(handle, "w", encoding="utf-8") as stream:
                stream.writelines(f"{entry}\n" for entry in self._entries)
            os.replace(temporary, file)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self._file_needs_newline = False
        self._file_lines = len(self._entries)

    # -- the walk (Up and Down) ------------------------------------------------------

    @property
    def walking(self) -> bool:
        """Whether :meth:`older` has moved off the line being typed."""
        return self._position is not None

    def older(self, draft: str) -> str | None:
        """The command before the one shown (Up), or None at the oldest.

        ``draft`` is what the command line holds: on the first step it is kept, for
        :meth:`newer` to give back.
        """
        if not self._entries:
            return None
        if self._position is None:
            self._draft = draft
            self._position = len(self._entries) - 1
        elif self._position == 0:
            return None
        else:
            self._position -= 1
        return self._entries[self._position]

    def newer(self) -> str | None:
        """The command after the one shown (Down); past the newest, the draft.

        None when not walking (the draft is already shown).
        """
        if self._position is None:
            return None
        self._position += 1
        if self._position < len(self._entries):
            return self._entries[self._position]
        draft = self._draft
        self.reset_walk()
        return draft

    def reset_walk(self) -> None:
        """Forget the walk: the next :meth:`older` starts again from the newest."""
        self._position = None
        self._draft = ""


def _clean(line: str) -> str | None:
    """``line`` as one stripped, terminal-safe line, or None if nothing is left."""
    text = " ".join(line.splitlines())
    text = terminal_safe(text).strip()
    return text or None


def _private(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)
