"""The token check in front of the HTTP transport, and where the token comes from.

A plain ASGI middleware: no request reaches the MCP endpoint without the token.
Accepted: ``Authorization: Bearer TOKEN`` (what MCP clients send from their config's
``headers``), or HTTP basic auth with the token as the password. The token is compared
in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from viewfinder.mcp.options import TOKEN_ENV, McpOptionError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


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
    """Answers 401 to every HTTP request that does not carry ``token``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = presented_token(scope.get("headers", []))
        if given is not None and hmac.compare_digest(given.encode("utf-8"), self._token):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32001,
                    "message": "missing or wrong token: send 'Authorization: Bearer TOKEN' "
                    "(the token viewfinder mcp was started with)",
                },
            }
        ).encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="viewfinder"'),
                    (b"content-length", str(len(body)).encode("ascii")),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def read_token(given: str | None, token_file: Path | None) -> str | None:
    """The token from ``--token-file``, ``--token`` or ``$VIEWFINDER_MCP_TOKEN``."""
    if given is not None and token_file is not None:
        raise McpOptionError("--token", "give --token or --token-file, not both")
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise McpOptionError("--token-file", f"cannot read {token_file}: {exc}") from None
        if not lines or not lines[0].strip():
            raise McpOptionError("--token-file", f"{token_file} is empty")
        return lines[0].strip()
    if given is not None:
        return given
    return os.environ.get(TOKEN_ENV) or None
