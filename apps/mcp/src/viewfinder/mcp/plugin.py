"""The mcp app's plugin module: adds ``viewfinder mcp`` to the command line."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder mcp` runs, so other commands do not pay for the MCP SDK
    app.add_lazy_command(
        "mcp",
        "viewfinder.mcp.command:mcp_command",
        help="Serve every viewfinder tool to MCP clients (stdio, or streamable HTTP with --http).",
    )
