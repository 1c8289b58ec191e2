"""The viewer app's plugin module: adds ``viewfinder view`` to the command line."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder view` runs: fastapi and uvicorn load only then
    app.add_lazy_command(
        "view",
        "viewfinder.viewer.command:view_command",
        help="Show recordings, desktop runs, cache files, trajectories and runs in a web "
        "page; watch a display live.",
    )
