"""ProcessTable: one row per process, plus rows for the browser and the display."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist

COLUMN_LABELS: dict[str, str] = {
    "id": "ID",
    "command": "COMMAND",
    "pid": "PID",
    "time": "TIME",
    "status": "STATUS",
    "output": "LAST OUTPUT",
}
COLUMN_WIDTHS: dict[str, int | None] = {
    "id": 8,
    "command": 28,
    "pid": 7,
    "time": 7,
    "status": 10,
    "output": None,
}
STATUS_STYLES = {
    "running": "green",
    "CDP ready": "green",
    "exited 0": "dim",
    "killed": "yellow",
    "off": "dim",
}


@dataclass(frozen=True)
class TableRow:
    """The cells of one row, by column name (``id``, ``command``, ...)."""

    key: str
    cells: dict[str, str]


class ProcessTable(DataTable[Text]):
    """A table of processes (id, command, PID, running time, status, last output line).

    Only the ``columns`` given are shown, so a snapshot can hide volatile ones (PIDs).
    :meth:`set_rows` updates cells in place, keeping the cursor where it was.
    """

    DEFAULT_CSS = """
    ProcessTable {
        height: auto;
        max-height: 12;
        border: round $primary;
        border-title-color: $text;
    }
    """

    def __init__(
        self, columns: Sequence[str] = tuple(COLUMN_LABELS), *, id: str | None = None
    ) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self.column_names = [name for name in columns if name in COLUMN_LABELS]
        self._rows_shown: dict[str, dict[str, str]] = {}
        self.border_title = "processes"

    def on_mount(self) -> None:
        for name in self.column_names:
            self.add_column(COLUMN_LABELS[name], key=name, width=COLUMN_WIDTHS[name])

    def set_rows(self, rows: Sequence[TableRow]) -> None:
        """Show exactly ``rows``, updating only cells that changed.

        New rows are appended, so keep the order stable: fixed rows first, then
        processes in the order they started.
        """
        wanted = {row.key for row in rows}
        for key in [key for key in self._rows_shown if key not in wanted]:
            self.remove_row(key)
            del self._rows_shown[key]
        for row in rows:
            shown = self._rows_shown.get(row.key)
            if shown is None:
                self.add_row(
                    *(self._cell(name, row.cells) for name in self.column_names), key=row.key
                )
            else:
                for name in self.column_names:
                    if shown.get(name) != row.cells.get(name):
                        self.update_cell(row.key, name, self._cell(name, row.cells))
            self._rows_shown[row.key] = dict(row.cells)

    def _cell(self, name: str, cells: dict[str, str]) -> Text:
        value = cells.get(name, "")
        style = STATUS_STYLES.get(value, "red" if value.startswith("failed") else "")
        if name != "status":
            style = "bold" if name == "id" else ""
        return Text(value, style=style, no_wrap=True, overflow="ellipsis")

    @property
    def highlighted_key(self) -> str | None:
        """The key of the row under the cursor, if any."""
        if not self.row_count:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except CellDoesNotExist:  # the cursor is outside the rows while they change
            return None

    def highlight(self, key: str) -> None:
        """Move the cursor to the row ``key`` when it is shown."""
        if key in self._rows_shown:
            self.move_cursor(row=self.get_row_index(key))
