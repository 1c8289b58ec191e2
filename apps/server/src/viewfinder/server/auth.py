"""The token check, in front of every HTTP request and WebSocket handshake.

:class:`viewfinder.core.web_access.TokenAuth` (shared with the MCP server and the
viewer), with the server's hint: nothing reaches a route, not even ``/health``, without
the token. Accepted: ``Authorization: Bearer TOKEN``, or HTTP basic auth with the token
as the password, which is what OpenEnv's own client (which cannot set headers) sends for
``http://user:TOKEN@host:8000``.
"""

from __future__ import annotations

from viewfinder.core.web_access import ASGIApp, presented_token
from viewfinder.core.web_access import TokenAuth as _CoreTokenAuth

__all__ = ["TokenAuth", "presented_token"]

HINT = (
    "missing or wrong token: send 'Authorization: Bearer TOKEN' (or basic auth with the "
    "token as password, as in http://user:TOKEN@host:port)"
)


class TokenAuth(_CoreTokenAuth):
    """Refuses every request and WebSocket that does not carry ``token`` (401)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        super().__init__(app, token, hint=HINT)
