"""The server's plugin module: adds ``viewfinder serve`` to the command line."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # typer is imported only here, so the server package loads without the CLI.
    from viewfinder.server.serve_command import register

    register(app)
