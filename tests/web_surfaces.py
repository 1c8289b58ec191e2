"""The four web surfaces of viewfinder, each a real server on loopback, for one
adversarial suite (tests/test_web_surfaces.py and tests/test_web_surfaces_browser.py).

- ``viewer``: ``viewfinder view`` with a folder and the live view of a real Xvfb, with
  ``--control`` (``/api/live`` takes clicks and keys);
- ``serve-code``: ``viewfinder serve`` (code env), ``/ws``;
- ``serve-desktop``: ``viewfinder serve --env desktop``, ``/mcp`` and ``/ws``;
- ``mcp-http``: ``viewfinder mcp --http`` as a process of its own.

Each is started as a user would on loopback (no token), or with a token for the token
cases; :class:`Surface` says how to talk to it.
"""

from __future__ import annotations

import base64
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from viewfinder.xvfb import Display

ROOT = Path(__file__).resolve().parents[1]
SURFACES = ("viewer", "serve-code", "serve-desktop", "mcp-http")
TOKEN = "a-token-for-the-web-surface-tests"
#: What the guard answers: no token, another origin, not JSON, another host.
REFUSALS = (401, 403, 415, 421)
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "web-surface-tests", "version": "1"},
    },
}


@dataclass(frozen=True)
class Call:
    """One HTTP request: ``method path`` with a JSON ``body`` (None: no body)."""

    method: str
    path: str
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Surface:
    """A running app: where it is, a request it answers (``read``), a state-changing
    ``POST`` it accepts from a script (``change``), its WebSocket paths, the page a
    browser would open, and whether it serves pages (the token may come in the address)."""

    name: str
    base: str
    read: Call
    change: Call
    sockets: tuple[str, ...]
    page: str
    pages: bool
    token: str | None = None
    app: Any = None

    @property
    def port(self) -> int:
        port = urlsplit(self.base).port
        assert port is not None
        return port

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def send(
        self,
        call: Call,
        *,
        host: str | None = None,
        origin: str | None = None,
        content_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """``call`` with a Host, an Origin or a body's type of the test's choosing."""
        sent = {**call.headers, **(headers or {})}
        if host is not None:
            sent["Host"] = host
        if origin is not None:
            sent["Origin"] = origin
        content = None
        if call.body is not None:
            import json

            content = json.dumps(call.body)
            sent.setdefault("Content-Type", "application/json")
        if content_type is not None:
            sent["Content-Type"] = content_type
        return httpx.request(
            call.method, self.base + call.path, content=content, headers=sent, timeout=60
        )


def handshake(
    surface: Surface, path: str, *, host: str | None = None, origin: str | None = None,
    headers: dict[str, str] | None = None,
) -> int:  # fmt: skip
    """The HTTP status a WebSocket handshake to ``path`` gets (101: the socket opened),
    written by hand so Host and Origin are what the test says."""
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: {host or f'127.0.0.1:{surface.port}'}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
        "Sec-WebSocket-Version: 13",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    with socket.create_connection(("127.0.0.1", surface.port), timeout=20) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        head = b""
        while b"\r\n" not in head and len(head) < 4096:
            chunk = sock.recv(1024)
            if not chunk:
                break
            head += chunk
    status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    assert status_line.startswith("HTTP/1.1 "), f"no HTTP answer to the handshake: {head!r}"
    return int(status_line.split()[1])


@contextmanager
def running(name: str, folder: Path, display: str, token: str | None = None) -> Iterator[Surface]:
    """Surface ``name`` running on loopback until the block ends."""
    starters: dict[str, Callable[[Path, str, str | None], Any]] = {
        "viewer": _viewer,
        "serve-code": lambda folder, display, token: _serve("code", token),
        "serve-desktop": lambda folder, display, token: _serve("desktop", token),
        "mcp-http": _mcp_http,
    }
    with starters[name](folder, display, token) as surface:
        yield surface


@contextmanager
def _viewer(folder: Path, display: str, token: str | None) -> Iterator[Surface]:
    from viewfinder.viewer import ViewerServer, ViewerSettings

    (folder / "secret-notes.txt").write_text("the typed text")
    settings = ViewerSettings(root=folder, live=(display,), control=True, port=0, token=token)
    with ViewerServer(settings) as viewer:
        yield Surface(
            "viewer",
            viewer.url,
            read=Call("GET", "/api/info"),
            change=Call("POST", "/api/info", {}),  # no state to change: 405 past the guard
            sockets=(f"/api/live?display={display}",),
            page="/",
            pages=True,
            token=token,
            app=viewer,
        )


def _server_settings(env: str, token: str | None) -> Any:
    from viewfinder.codeenv import CodeEnvConfig
    from viewfinder.server import ServerSettings

    return ServerSettings(
        env="desktop" if env == "desktop" else "code",
        pool_size=1,
        display_width=640,
        display_height=480,
        max_sessions=4,
        token=token,
        codeenv=CodeEnvConfig(timeout_s=20, width=640, height=480),
    )


@contextmanager
def _serve(env: str, token: str | None) -> Iterator[Surface]:
    """``viewfinder serve --env ENV``: a code env resets on ``POST /reset``, a desktop
    server lists its tools on ``POST /mcp``."""
    from viewfinder.server import LocalServer

    tools_list = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    change = Call("POST", "/mcp", tools_list) if env == "desktop" else Call("POST", "/reset", {})
    with LocalServer(_server_settings(env, token)) as server:
        yield Surface(
            f"serve-{env}", server.base_url, read=Call("GET", "/health"), change=change,
            sockets=("/ws",), page="/health", pages=False, token=token, app=server,
        )  # fmt: skip


@contextmanager
def _mcp_http(folder: Path, display: str, token: str | None) -> Iterator[Surface]:
    from viewfinder.mcp.testing import HttpServer

    server = HttpServer(
        folder, "--max-sessions", "64", token=token,
        env={"VIEWFINDER_CHROMIUM": "/nonexistent/chromium"}, cwd=ROOT,
    )  # fmt: skip
    try:
        parts = urlsplit(server.url)
        initialize = Call("POST", parts.path, INITIALIZE, MCP_ACCEPT)
        yield Surface(
            "mcp-http",
            f"{parts.scheme}://{parts.netloc}",
            read=initialize,
            change=initialize,
            sockets=(),
            page=parts.path,
            pages=False,
            token=token,
            app=server,
        )
    finally:
        server.stop()


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(640, 480) as started:
        yield started


@pytest.fixture(scope="module", params=SURFACES)
def surface(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, display: Display
) -> Iterator[Surface]:
    """Each surface as a user starts it on loopback: no token."""
    folder = tmp_path_factory.mktemp(request.param)
    with running(request.param, folder, display.name) as started:
        yield started


@pytest.fixture(scope="module", params=SURFACES)
def with_token(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, display: Display
) -> Iterator[Surface]:
    """Each surface with a token."""
    folder = tmp_path_factory.mktemp(f"{request.param}-token")
    with running(request.param, folder, display.name, token=TOKEN) as started:
        yield started


def passed_the_guard(response: httpx.Response) -> bool:
    """The app itself answered, not the guard (a route may still say no, as the
    viewer's 405 for a POST)."""
    return response.status_code not in REFUSALS
