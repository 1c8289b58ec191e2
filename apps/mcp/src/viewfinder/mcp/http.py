"""``viewfinder mcp --http``: streamable HTTP, one session (and desktop) per client.

The SDK's streamable HTTP transport gives each client an MCP session id at
``initialize``; every later request carries it (``Mcp-Session-Id``), and that id is the
key of the client's :class:`~viewfinder.mcp.session.McpSession`. Around the SDK's
endpoint, plain ASGI middleware (see :class:`SessionEnds`) sees what ends a session:
a ``DELETE`` the SDK accepted (an SDK client sends one when it disconnects), and, with
no request in flight for ``--idle-timeout`` seconds, a client that vanished. Stopping
the server (SIGTERM, SIGINT, SIGHUP) closes every session.

The 2026-07-28 revision of MCP serves each HTTP request on its own, without sessions,
and so without a desktop that lasts from one call to the next; this server answers the
``server/discover`` probe with the handshake-era versions only, so clients use the
``initialize`` handshake and get a session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from types import FrameType
from typing import Any

import uvicorn
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.routing import Route

from mcp import types
from mcp.server import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from viewfinder.core import Tool
from viewfinder.core.web_access import (
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    guard,
    require_guard,
)
from viewfinder.mcp.auth import mcp_access
from viewfinder.mcp.options import DesktopOptions, HttpOptions
from viewfinder.mcp.server import build_server
from viewfinder.mcp.sessions import SessionRegistry

log = logging.getLogger(__name__)

#: Seconds uvicorn waits for open connections (a client's event stream) when it stops.
GRACEFUL_SHUTDOWN_S = 2
_SESSION_HEADER = MCP_SESSION_ID_HEADER.lower().encode("latin-1")
NO_SESSION = (
    "this server keeps a desktop for each MCP session, and this request belongs to none: "
    "connect with the initialize handshake (protocol versions "
    f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}), whose Mcp-Session-Id ties your calls to "
    "your desktop"
)


def http_session_key(ctx: Any) -> str:
    """The MCP session id of the request ``ctx`` answers (MCPError without one)."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    key = headers.get(MCP_SESSION_ID_HEADER) if headers is not None else None
    if not key:
        raise MCPError(types.INVALID_REQUEST, NO_SESSION)
    return str(key)


class SessionEnds:
    """ASGI middleware: tells ``registry`` which sessions have requests in flight, and
    closes a session whose ``DELETE`` the SDK accepted."""

    def __init__(self, app: ASGIApp, registry: SessionRegistry) -> None:
        self.app = app
        self.registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _session_of(scope) if scope["type"] == "http" else None
        if key is None:
            await self.app(scope, receive, send)
            return
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        self.registry.begin(key)
        try:
            await self.app(scope, receive, watch)
        finally:
            self.registry.end(key)
        if scope["method"] == "DELETE" and status and status[0] < 400:
            await self.registry.close(key)


def _session_of(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == _SESSION_HEADER:
            return str(value.decode("latin-1"))
    return None


def http_app(server: Server[Any], registry: SessionRegistry, options: HttpOptions) -> ASGIApp:
    """The ASGI app: the SDK's streamable HTTP endpoint at ``options.path``, behind the
    session tracking and :class:`~viewfinder.core.web_access.WebGuard` (Host, Origin,
    JSON bodies, framing, the token; the SDK's own Host/Origin check is off, the guard
    decides). Its lifespan runs the SDK's session manager and the idle timeout, and
    closes every session at the end."""
    server.streamable_http_app(
        streamable_http_path=options.path,
        host=options.host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        session_idle_timeout=options.idle_timeout,
        max_sessions=options.max_sessions,
    )
    manager = server.session_manager

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            reaper = asyncio.create_task(_close_idle_sessions(registry, options.idle_timeout))
            try:
                yield
            finally:
                reaper.cancel()
                closed = await registry.close_all()
                _say(f"stopped; closed {closed} session(s) and everything they started")

    starlette = Starlette(
        routes=[Route(options.path, endpoint=StreamableHTTPASGIApp(manager))], lifespan=lifespan
    )
    return guard(SessionEnds(starlette, registry), mcp_access(options))


async def _close_idle_sessions(registry: SessionRegistry, idle_timeout: float) -> None:
    every = min(30.0, max(0.5, idle_timeout / 4))
    while True:
        await asyncio.sleep(every)
        try:
            await registry.close_idle(idle_timeout)
        except Exception:
            log.exception("closing idle sessions failed")


def handshake_only(server: Server[Any]) -> None:
    """Make ``server`` answer ``server/discover`` with the handshake-era versions only,
    so a client falls back to ``initialize`` and gets a session."""

    async def discover(ctx: Any, params: types.RequestParams | None) -> types.DiscoverResult:
        return types.DiscoverResult(
            supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS),
            capabilities=server.get_capabilities(),
            instructions=server.instructions,
        )

    server.add_request_handler("server/discover", types.RequestParams, discover)


def serve_http(
    tools: Mapping[str, Tool],
    desktop: DesktopOptions,
    options: HttpOptions,
    withheld: Mapping[str, str] | None = None,
) -> int:
    """Serve ``tools`` over streamable HTTP until a stop signal; the exit status
    (128 + the signal's number). Every session is closed before this returns."""
    registry = SessionRegistry(desktop)
    server = build_server(tools, registry, http_session_key, withheld=withheld)
    handshake_only(server)
    app = http_app(server, registry, options)
    sock = _listen(options.host, options.port)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        require_guard(app),
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    runner = _Uvicorn(config)
    _say(f"serving streamable HTTP on {options.url(port)}")
    runner.run(sockets=[sock])
    return 128 + runner.stopped_by if runner.stopped_by else 0


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (port 0: one the system picks)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        family = socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class _Uvicorn(uvicorn.Server):
    """uvicorn, stopped by SIGHUP too (a closed terminal), remembering which signal."""

    stopped_by = 0

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # not uvicorn's, which raises the signal again once stopped: the sessions are
        # closed by then, and the exit status says which signal it was
        self.stopped_by = self.stopped_by or int(sig)
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            with super().capture_signals():
                yield
            return
        before = signal.signal(signal.SIGHUP, self.handle_exit)
        try:
            with super().capture_signals():
                yield
        finally:
            signal.signal(signal.SIGHUP, before)


def _say(message: str) -> None:
    print(f"viewfinder mcp: {message}", file=sys.stderr, flush=True)
