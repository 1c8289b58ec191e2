"""The recorder's plugin module: adds ``viewfinder record`` to the command line."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # typer is imported only here, so the recorder works without the CLI installed.
    from viewfinder.recorder.commands import record_app

    app.add_typer(record_app(), name="record")
