"""The widgets of the viewfinder TUI, each reusable on its own."""

from viewfinder.tui.widgets.process_log import ProcessLog
from viewfinder.tui.widgets.process_table import ProcessTable, TableRow
from viewfinder.tui.widgets.shot_preview import ShotPreview

__all__ = ["ProcessLog", "ProcessTable", "ShotPreview", "TableRow"]
