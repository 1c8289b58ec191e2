"""The server's plugin module: adds ``viewfinder serve`` to the command line and the
``local`` session provider."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl
from viewfinder.core.hookspecs import RegisterProvider


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder serve` runs, so other commands do not pay for it
    app.add_lazy_command(
        "serve",
        "viewfinder.server.serve_command:serve",
        help="Serve code env or desktop sessions (HTTP and WebSocket, the OpenEnv wire protocol).",
    )


@hookimpl
def viewfinder_register_session_providers(register: RegisterProvider) -> None:
    # sessions on this machine: worker processes and a pool of warm displays
    register("local", "viewfinder.server.local_provider:LocalProvider")
