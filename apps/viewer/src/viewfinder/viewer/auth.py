"""The token check in front of every request and WebSocket, when the viewer has a token.

As ``viewfinder serve``: listening beyond loopback needs a token. A browser cannot add
a header to a page it opens, so the address the viewer prints carries the token
(``http://host:port/?token=TOKEN``); the first response sets it as a cookie
(HttpOnly, SameSite=Strict) that the page's own requests and its WebSocket then carry.
``Authorization: Bearer TOKEN`` works too, for scripts.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "viewfinder_viewer_token"
_DENIAL = "websocket.http.response"


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


class TokenGate:
    """Refuses (401) every request and WebSocket that does not present ``token``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode("utf-8"), self._token)

    def _presented(self, scope: Scope) -> tuple[bool, bool]:
        """(allowed, came in the address) for this request."""
        authorization = _header(scope, b"authorization") or ""
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() == "bearer" and self._matches(credentials.strip()):
            return True, False
        cookies = SimpleCookie()
        try:
            cookies.load(_header(scope, b"cookie") or "")
        except Exception:  # a malformed Cookie header is no token
            cookies = SimpleCookie()
        if COOKIE in cookies and self._matches(cookies[COOKIE].value):
            return True, False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if any(self._matches(value) for value in query.get("token", [])):
            return True, True
        return False, False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        allowed, in_address = self._presented(scope)
        if allowed and in_address and scope["type"] == "http":
            await self.app(scope, receive, self._setting_cookie(send))
            return
        if allowed:
            await self.app(scope, receive, send)
            return
        await self._refuse(scope, receive, send)

    def _setting_cookie(self, send: Send) -> Send:
        cookie = (
            f"{COOKIE}={self._token.decode('utf-8')}; Path=/; HttpOnly; SameSite=Strict"
        ).encode("latin-1")

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        return wrapped

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = json.dumps(
            {
                "detail": "missing or wrong token: open the address `viewfinder view` printed "
                "(it ends in ?token=...), or send 'Authorization: Bearer TOKEN'"
            }
        ).encode("utf-8")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode("ascii")),
        ]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif _DENIAL in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": 401, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await receive()
            await send(
                {"type": "websocket.close", "code": 1008, "reason": "missing or wrong token"}
            )
