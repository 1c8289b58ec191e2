"""The recorder's plugin module: adds ``viewfinder record`` to the command line."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder record` runs, so other commands do not pay for it
    app.add_lazy_typer(
        "record",
        "viewfinder.recorder.commands:record_app",
        help="Record actions paired with the screenshot just before each; show and export "
        "recordings.",
    )


@hookimpl
def viewfinder_register_tools(register: Any) -> None:
    from viewfinder.recorder.agent_tools import RECORD_START, RECORD_STOP

    register(RECORD_START)
    register(RECORD_STOP)
