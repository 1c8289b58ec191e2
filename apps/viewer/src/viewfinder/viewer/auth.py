"""Who may use the viewer: :class:`viewfinder.core.web_access.WebGuard`, as for every
web surface of viewfinder.

The guard refuses other hosts (DNS rebinding), other origins (a page of another site
opening ``/api/live``), framing and, with a token, anyone without it. A browser cannot
add a header to a page it opens, so the address the viewer prints carries the token
(``http://host:port/?token=TOKEN``); the first response sets it as a cookie named after
the port (HttpOnly, SameSite=Strict) and sends the page to the same address without
the token. ``Authorization: Bearer TOKEN`` works too, for scripts.
"""

from __future__ import annotations

from viewfinder.core.web_access import WebAccess
from viewfinder.viewer.settings import ViewerSettings

HINT = (
    "missing or wrong token: open the address `viewfinder view` printed (it ends in "
    "?token=...), or send 'Authorization: Bearer TOKEN'"
)


def viewer_access(settings: ViewerSettings) -> WebAccess:
    """Who may use the viewer of ``settings``."""
    return WebAccess(
        host=settings.host, token=settings.token, pages=True, hint=HINT, name="viewfinder_view"
    )
