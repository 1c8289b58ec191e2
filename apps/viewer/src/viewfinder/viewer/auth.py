"""Who may use the viewer: :class:`viewfinder.core.web_access.WebGuard`, as for every
web surface of viewfinder.

The guard refuses other hosts (DNS rebinding), other origins (a page of another site
opening ``/api/live``), framing and, with a token, anyone without it. The address the
viewer prints carries the token in its fragment (``http://host:port/#token=TOKEN``),
which a browser never sends: the page (its shell is served without the token) reads
it, keeps it for its own origin only (``sessionStorage``: scheme, host and port) and
sends it as ``Authorization: Bearer TOKEN``, on its WebSocket as a subprotocol. There
is no cookie, so no server on another port of the host ever gets the token.
``Authorization: Bearer TOKEN`` works for scripts too.
"""

from __future__ import annotations

from viewfinder.core.web_access import WebAccess
from viewfinder.viewer.settings import ViewerSettings

HINT = (
    "missing or wrong token: open the address `viewfinder view` printed (it ends in "
    "#token=...), or send 'Authorization: Bearer TOKEN'"
)


def viewer_access(settings: ViewerSettings) -> WebAccess:
    """Who may use the viewer of ``settings``."""
    return WebAccess(
        host=settings.host, token=settings.token, pages=True, hint=HINT, name="viewfinder_view"
    )
