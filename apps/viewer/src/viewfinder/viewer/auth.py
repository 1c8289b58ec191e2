"""The token check in front of every request and WebSocket, when the viewer has a token.

As ``viewfinder serve``: listening beyond loopback needs a token (the check is
:class:`viewfinder.core.web_access.TokenAuth`, shared with the server and the MCP
server). A browser cannot add a header to a page it opens, so the address the viewer
prints carries the token (``http://host:port/?token=TOKEN``); the first response sets it
as a cookie (HttpOnly, SameSite=Strict) that the page's own requests and its WebSocket
then carry. ``Authorization: Bearer TOKEN`` works too, for scripts.
"""

from __future__ import annotations

from viewfinder.core.web_access import ASGIApp, TokenAuth

COOKIE = "viewfinder_viewer_token"
HINT = (
    "missing or wrong token: open the address `viewfinder view` printed (it ends in "
    "?token=...), or send 'Authorization: Bearer TOKEN'"
)


class TokenGate(TokenAuth):
    """Refuses (401) every request and WebSocket that does not present ``token``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        super().__init__(app, token, hint=HINT, cookie=COOKIE, query_param="token")
