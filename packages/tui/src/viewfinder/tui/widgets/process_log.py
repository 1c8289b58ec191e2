"""ProcessLog: the output of one process, written in batches on a short timer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual.widgets import Log

from viewfinder.tui.log_search import LogSearch


class ProcessLog(Log):
    """A :class:`~textual.widgets.Log` showing one process's output, following new lines.

    Lines are queued with :meth:`queue_lines` (cheap: a list extend) and written to the
    log by :meth:`flush` every ``refresh_interval`` seconds, one UI update per batch
    however fast the process writes. Neither the queue nor the log grows past
    ``max_lines``: lines that would scroll out before being seen are dropped early.

    With a :class:`~viewfinder.tui.log_search.LogSearch` given to :meth:`show` only the
    lines that match are shown, new ones included, and the subtitle (in the bottom
    border) names the search and counts them.
    """

    DEFAULT_CSS = """
    ProcessLog {
        overflow-x: auto;
        overflow-y: scroll;  /* "auto" would stop following when the scrollbar appears */
        border: round $secondary;
        border-title-color: $text;
        padding: 0 1;
    }
    ProcessLog:focus {
        border: round $accent;
    }
    """

    def __init__(
        self,
        *,
        max_lines: int = 10_000,
        refresh_interval: float = 0.05,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(max_lines=max_lines, auto_scroll=True, id=id, classes=classes)
        self.refresh_interval = refresh_interval
        #: The process whose output is shown, or None.
        self.process_id: str | None = None
        #: The search that picks the lines shown, or None for every line.
        self.search: LogSearch | None = None
        #: With a search: lines looked at and lines that matched since :meth:`show`.
        self.searched_lines = 0
        self.matched_lines = 0
        self._title = "log"
        self._pending: list[str] = []
        #: Lines queued so far, and lines written to the log (for tests and benchmarks).
        self.queued_total = 0
        self.written_total = 0
        self.flushes = 0
        self.border_title = "log"

    def on_mount(self) -> None:
        self.set_interval(self.refresh_interval, self.flush, name="flush process log")

    def show(
        self,
        process_id: str,
        title: str,
        lines: Iterable[str],
        search: LogSearch | None = None,
    ) -> None:
        """Switch to ``process_id``: clear, write its buffered ``lines``, follow it.

        With ``search``, only the lines that match, now and later.
        """
        self.process_id = process_id
        self.search = search
        self.searched_lines = self.matched_lines = 0
        self._title = title
        self._pending.clear()
        self.clear()
        self.queue_lines(list(lines))
        self.flush()
        self._show_title()
        self.scroll_end(animate=False)

    def _show_title(self) -> None:
        # Text: a "[" in a command line or a search is not markup.
        self.border_title = Text(self._title)
        search = self.search
        if search is None:
            self.border_subtitle = None
        else:
            plural = "" if self.matched_lines == 1 else "s"
            self.border_subtitle = Text(f"{search}: {self.matched_lines} line{plural}")

    def queue_lines(self, lines: Sequence[str]) -> None:
        """Queue lines of the shown process for the next :meth:`flush`."""
        if self.search is not None:
            self.searched_lines += len(lines)
            lines = self.search.select(lines)
            self.matched_lines += len(lines)
        pending = self._pending
        pending.extend(lines)
        self.queued_total += len(lines)
        limit = self.max_lines
        if limit is not None and len(pending) > 2 * limit:
            # Only the last max_lines can ever be shown; keep memory flat under a flood.
            del pending[: len(pending) - limit]

    def flush(self) -> None:
        """Write the queued lines to the log in one batch."""
        if not self._pending:
            return
        batch = self._pending
        limit = self.max_lines
        if limit is not None and len(batch) > limit:
            batch = batch[-limit:]
        self._pending = []
        self.write_lines(batch)
        self.written_total += len(batch)
        self.flushes += 1
        if self.search is not None:
            self._show_title()
