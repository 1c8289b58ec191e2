"""Fixtures for the MCP server's tests: ``viewfinder mcp`` as a real process, driven by
the MCP SDK's own client over stdio and over streamable HTTP on loopback (see
:mod:`viewfinder.mcp.testing`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from viewfinder.mcp.testing import StdioServer

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def stdio_server(tmp_path: Path) -> Iterator[Callable[..., StdioServer]]:
    """``stdio_server(*args)``: a server for this test, disconnected afterwards."""
    started: list[StdioServer] = []

    def start(*args: str, env: dict[str, str] | None = None) -> StdioServer:
        server = StdioServer(tmp_path, *args, env=env, cwd=ROOT)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()
