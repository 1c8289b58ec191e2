"""Who may use a viewfinder app served over HTTP: the address rule and the token gate.

``viewfinder serve``, ``viewfinder mcp --http`` and ``viewfinder view`` listen on
loopback by default; any other address needs a token, which every request and
WebSocket handshake must carry. :class:`TokenAuth` is a plain ASGI middleware (the
standard library only, so core depends on no web framework): nothing reaches a route
without the token. Accepted: ``Authorization: Bearer TOKEN``; HTTP basic auth with the
token as the password (what clients send for ``http://user:TOKEN@host:port``); and,
where the app asks for them, a cookie and a ``?token=`` query parameter (a browser
cannot add a header to a page it opens: the first response then sets the cookie).
A refused WebSocket handshake gets an HTTP 401 (the ASGI denial-response extension) or,
where the server lacks it, a close with code 1008.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})
_DENIAL = "websocket.http.response"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is an address of this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def presented_token(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token a request carries in its ``Authorization`` header (bearer or basic)."""
    for name, value in headers:
        if name.lower() != b"authorization":
            continue
        scheme, _, credentials = value.decode("latin-1").partition(" ")
        if scheme.lower() == "bearer":
            return credentials.strip()
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return None
            return decoded.partition(":")[2]
    return None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def json_detail(hint: str) -> dict[str, Any]:
    """The default body of a refusal: ``{"detail": hint}``."""
    return {"detail": hint}


class TokenAuth:
    """Refuses (401) every HTTP request and WebSocket that does not carry ``token``.

    ``hint`` says how to send the token; ``body(hint)`` shapes the JSON of a refusal
    (default ``{"detail": hint}``; the MCP server answers a JSON-RPC error). ``cookie``
    and ``query_param`` name the extra places a browser page keeps the token in.
    Other ASGI scopes (lifespan) pass through.
    """

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        *,
        hint: str = "missing or wrong token: send 'Authorization: Bearer TOKEN'",
        body: Callable[[str], Any] = json_detail,
        cookie: str | None = None,
        query_param: str | None = None,
    ) -> None:
        if not token:
            raise ValueError("TokenAuth needs a non-empty token")
        self.app = app
        self._token = token.encode("utf-8")
        self._hint = hint
        self._body = body
        self._cookie = cookie
        self._query_param = query_param

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode("utf-8"), self._token)

    def _presented(self, scope: Scope) -> tuple[bool, bool]:
        """(allowed, came in the address) for this request."""
        if self._matches(presented_token(scope.get("headers", []))):
            return True, False
        if self._cookie is not None:
            cookies: SimpleCookie = SimpleCookie()
            try:
                cookies.load(_header(scope, b"cookie") or "")
            except CookieError:  # a malformed Cookie header is no token
                cookies = SimpleCookie()
            if self._cookie in cookies and self._matches(cookies[self._cookie].value):
                return True, False
        if self._query_param is not None:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            if any(self._matches(value) for value in query.get(self._query_param, [])):
                return True, True
        return False, False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        allowed, in_address = self._presented(scope)
        if not allowed:
            await self._refuse(scope, receive, send)
        elif in_address and self._cookie is not None and scope["type"] == "http":
            await self.app(scope, receive, self._setting_cookie(send))
        else:
            await self.app(scope, receive, send)

    def _setting_cookie(self, send: Send) -> Send:
        cookie = (
            f"{self._cookie}={self._token.decode('utf-8')}; Path=/; HttpOnly; SameSite=Strict"
        ).encode("latin-1")

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        return wrapped

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = json.dumps(self._body(self._hint)).encode("utf-8")
        headers = [
            (b"content-type", b"application/json"),
            (b"www-authenticate", b'Bearer realm="viewfinder"'),
            (b"content-length", str(len(body)).encode("ascii")),
        ]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif _DENIAL in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": 401, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await receive()  # the websocket.connect event
            await send(
                {"type": "websocket.close", "code": 1008, "reason": "missing or wrong token"}
            )
