"""The server's plugin module: adds ``viewfinder serve`` to the command line."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder serve` runs, so other commands do not pay for it
    app.add_lazy_command(
        "serve",
        "viewfinder.server.serve_command:serve",
        help="Serve code env or desktop sessions (HTTP and WebSocket, the OpenEnv wire protocol).",
    )
