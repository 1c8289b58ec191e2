"""The server's plugin module: adds ``viewfinder serve`` and ``viewfinder tasks`` to the
command line, the ``local`` session provider, and the ``code`` and ``desktop``
environments."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl
from viewfinder.core.hookspecs import RegisterEnv, RegisterProvider


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder serve` runs, so other commands do not pay for it
    app.add_lazy_command(
        "serve",
        "viewfinder.server.serve_command:serve",
        help="Serve code env or desktop sessions (HTTP and WebSocket, the OpenEnv wire protocol).",
    )
    app.add_lazy_typer(
        "tasks",
        "viewfinder.server.tasks.command:app",
        help="Tasks that score themselves: validate, list and run suites with an agent.",
    )


@hookimpl
def viewfinder_register_session_providers(register: RegisterProvider) -> None:
    # sessions on this machine: worker processes and a pool of warm displays
    register("local", "viewfinder.server.local_provider:LocalProvider")


@hookimpl
def viewfinder_register_envs(register: RegisterEnv) -> None:
    # by import path: a server imports only the env it serves
    register(
        "code",
        "viewfinder.server.code_served:CodeServed",
        description="Python on a display, OpenEnv's coding env protocol",
    )
    register(
        "desktop",
        "viewfinder.server.desktop_served:DesktopServed",
        description="a screen with apps, its tools called with OpenEnv's MCP actions and on /mcp",
    )
