"""The token check, in front of every HTTP request and WebSocket handshake.

A plain ASGI middleware, so nothing reaches a route, not even ``/health``, without the
token. Accepted: ``Authorization: Bearer TOKEN``, or HTTP basic auth with the token as
the password (any user name), which is what clients send for a URL with credentials,
``http://user:TOKEN@host:8000``; that lets OpenEnv's own client, which cannot set
headers, use a server that needs a token. A refused WebSocket handshake gets an HTTP
401 response (the ASGI denial-response extension) or, where the server lacks it, a
close with code 1008.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_DENIAL = "websocket.http.response"


def presented_token(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The token a request carries in its ``Authorization`` header, if any."""
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


class TokenAuth:
    """Refuses every request and WebSocket that does not carry ``token`` (401)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    def _allowed(self, scope: Scope) -> bool:
        given = presented_token(scope.get("headers", []))
        return given is not None and hmac.compare_digest(given.encode("utf-8"), self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "detail": "missing or wrong token: send 'Authorization: Bearer TOKEN' (or "
                "basic auth with the token as password, as in http://user:TOKEN@host:port)"
            }
        ).encode("utf-8")
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
