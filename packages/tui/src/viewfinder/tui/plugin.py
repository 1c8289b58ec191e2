"""Adds the ``viewfinder tui`` command."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder tui` runs, so other commands do not pay for it
    app.add_lazy_command(
        "tui",
        "viewfinder.tui.cli:tui_command",
        help="Watch and drive processes, a browser and a virtual screen in the terminal.",
    )
