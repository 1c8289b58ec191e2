"""Who may use the server: :class:`viewfinder.core.web_access.WebGuard`, in front of
every HTTP request and WebSocket handshake (``/ws`` and ``/mcp`` included).

The guard refuses other hosts (DNS rebinding), other origins, CORS-simple state changes
(a ``text/plain`` ``POST /mcp`` from a web page), framing and, with a token, anyone
without it: nothing reaches a route, not even ``/health``. Accepted:
``Authorization: Bearer TOKEN``, or HTTP basic auth with the token as the password,
which is what OpenEnv's own client (which cannot set headers) sends for
``http://user:TOKEN@host:8000``.
"""

from __future__ import annotations

from viewfinder.core.web_access import WebAccess, presented_token
from viewfinder.server.settings import ServerSettings

__all__ = ["HINT", "presented_token", "server_access"]

HINT = (
    "missing or wrong token: send 'Authorization: Bearer TOKEN' (or basic auth with the "
    "token as password, as in http://user:TOKEN@host:port)"
)


def server_access(settings: ServerSettings) -> WebAccess:
    """Who may use the server of ``settings``."""
    return WebAccess(host=settings.host, token=settings.token, hint=HINT, name="viewfinder_serve")
