"""ProcessLog: the output of one process, written in batches on a short timer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.widgets import Log


class ProcessLog(Log):
    """A :class:`~textual.widgets.Log` showing one process's output, following new lines.

    Lines are queued with :meth:`queue_lines` (cheap: a list extend) and written to the
    log by :meth:`flush` every ``refresh_interval`` seconds, one UI update per batch
    however fast the process writes. Neither the queue nor the log grows past
    ``max_lines``: lines that would scroll out before being seen are dropped early.
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
        self._pending: list[str] = []
        #: Lines queued so far, and lines written to the log (for tests and benchmarks).
        self.queued_total = 0
        self.written_total = 0
        self.flushes = 0
        self.border_title = "log"

    def on_mount(self) -> None:
        self.set_interval(self.refresh_interval, self.flush, name="flush process log")

    def show(self, process_id: str, title: str, lines: Iterable[str]) -> None:
        """Switch to ``process_id``: clear, write its buffered ``lines``, follow it."""
        self.process_id = process_id
        self.border_title = title
        self._pending.clear()
        self.clear()
        self.queue_lines(list(lines))
        self.flush()
        self.scroll_end(animate=False)

    def queue_lines(self, lines: Sequence[str]) -> None:
        """Queue lines of the shown process for the next :meth:`flush`."""
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
