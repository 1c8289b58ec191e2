"""``viewfinder mcp --print-config CLIENT``: the JSON to paste into an MCP client.

Claude (Claude Code's ``.mcp.json``, Claude Desktop's ``claude_desktop_config.json``)
and Cursor (``.cursor/mcp.json``) read ``{"mcpServers": {...}}``; VS Code
(``.vscode/mcp.json``) reads ``{"servers": {...}}``. Over stdio the entry starts this
very command, with the options it was given, by the absolute path of the ``viewfinder``
executable (clients do not start servers from your shell, so a bare name may not be
found). Over HTTP the entry is the server's URL (Claude Desktop's file has none: it is
refused, saying what to do), and, when the server has a token, an
``Authorization`` header that takes the token from the environment (Claude, Cursor) or
asks for it once (VS Code): it is never written into the file.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from viewfinder.mcp.options import TOKEN_ENV, HttpOptions, McpOptionError

CLIENTS = ("claude", "claude-code", "claude-desktop", "cursor", "vscode")
#: The result budget (``--client``) each client's settings start the server with.
CLIENT_PROFILES = {
    "claude": "claude-code",  # the tighter of the two that read this file
    "claude-code": "claude-code",
    "claude-desktop": "claude-desktop",
    "cursor": "cursor",
    "vscode": "generic",
}
SERVER_NAME = "viewfinder"


def viewfinder_command() -> list[str]:
    """How a client starts ``viewfinder``: the executable beside this Python, else on
    PATH, else this Python running the CLI module."""
    beside = Path(sys.executable).with_name("viewfinder")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("viewfinder")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "viewfinder.cli"]


def client_config(
    client: str,
    arguments: Sequence[str],
    http: HttpOptions | None = None,
    url: str | None = None,
) -> dict[str, Any]:
    """The settings ``client`` reads: ``viewfinder mcp ARGUMENTS`` over stdio, or with
    ``http`` the URL ``url`` (default: ``http``'s own; :class:`McpOptionError` for a
    port of 0, which no settings can name)."""
    if client not in CLIENTS:
        raise ValueError(f"unknown client {client!r}; use {', '.join(CLIENTS)}")
    if http is not None and client == "claude-desktop":
        # its claude_desktop_config.json starts local stdio servers; a url entry there is
        # not read (remote servers are added in its settings, as a custom connector)
        raise McpOptionError(
            "--http",
            "Claude Desktop's config file starts local servers over stdio and does not "
            "read a URL: drop --http (Claude Desktop then starts viewfinder mcp itself), "
            "or add the server's URL in Claude Desktop's settings as a custom connector",
        )
    if http is None:
        command, *prefix = viewfinder_command()
        entry: dict[str, Any] = {"command": command, "args": [*prefix, "mcp", *arguments]}
        if client == "vscode":
            entry = {"type": "stdio", **entry}
        return _wrap(client, entry)
    entry = {"url": url or http.client_url()}
    if client != "cursor":
        entry = {"type": "http", **entry}
    inputs = []
    if http.token:
        if client == "vscode":
            entry["headers"] = {"Authorization": "Bearer ${input:viewfinder-token}"}
            inputs.append(
                {
                    "type": "promptString",
                    "id": "viewfinder-token",
                    "description": "The token viewfinder mcp was started with",
                    "password": True,
                }
            )
        elif client == "cursor":
            entry["headers"] = {"Authorization": f"Bearer ${{env:{TOKEN_ENV}}}"}
        else:
            entry["headers"] = {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"}
    config = _wrap(client, entry)
    if inputs:
        config = {"inputs": inputs, **config}
    return config


def _wrap(client: str, entry: dict[str, Any]) -> dict[str, Any]:
    key = "servers" if client == "vscode" else "mcpServers"
    return {key: {SERVER_NAME: entry}}


def where_it_goes(client: str, http: bool) -> str:
    """One line on where to paste the JSON, for stderr."""
    if client in ("claude", "claude-code") and http:
        return "paste into .mcp.json in your project (Claude Code)"
    if client == "claude-code":
        return "paste into .mcp.json in your project (Claude Code)"
    if client == "claude-desktop":
        return "paste into claude_desktop_config.json (Claude Desktop)"
    if client == "claude":
        return (
            "paste into .mcp.json in your project (Claude Code) or into "
            "claude_desktop_config.json (Claude Desktop)"
        )
    if client == "cursor":
        return "paste into .cursor/mcp.json in your project, or ~/.cursor/mcp.json"
    return "paste into .vscode/mcp.json in your workspace"
