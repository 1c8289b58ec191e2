"""The widgets of the viewfinder TUI, each reusable on its own."""

from viewfinder.tui.widgets.command_input import CommandInput
from viewfinder.tui.widgets.process_log import ProcessLog
from viewfinder.tui.widgets.process_table import ProcessTable, TableRow
from viewfinder.tui.widgets.shot_preview import ShotPreview

__all__ = ["CommandInput", "ProcessLog", "ProcessTable", "ShotPreview", "TableRow"]
