"""Names of viewfinder.mcp, imported on first use (see __init__.py)."""

from .config import client_config
from .http import serve_http
from .options import DesktopOptions, HttpOptions, McpOptionError
from .server import build_server, mcp_result, mcp_tool, served_tools
from .session import McpSession, SessionClosedError
from .sessions import SessionRegistry
from .stdio import serve_stdio

__all__ = [
    "DesktopOptions",
    "HttpOptions",
    "McpOptionError",
    "McpSession",
    "SessionClosedError",
    "SessionRegistry",
    "build_server",
    "client_config",
    "mcp_result",
    "mcp_tool",
    "serve_http",
    "serve_stdio",
    "served_tools",
]
