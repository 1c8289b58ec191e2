"""Finding a browser's DevTools websocket from what a user gives us.

A user may give the browser websocket itself (``ws://127.0.0.1:9222/devtools/browser/
<id>``) or, more often, just the debugging address (``http://127.0.0.1:9222``, or
``127.0.0.1:9222``); the websocket URL is then read from ``/json/version``.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from viewfinder.cdp.connection import CDPConnection
from viewfinder.cdp.errors import CDPConnectError

#: Environment variable naming the browser to attach to instead of launching one.
CDP_URL_ENV = "VIEWFINDER_CDP_URL"

# Loopback DevTools endpoints must never go through an HTTP proxy from the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def resolve_cdp_url(explicit: str | None = None) -> str | None:
    """The CDP URL to use: ``explicit``, else ``$VIEWFINDER_CDP_URL``, else None.

    A bare ``host:port`` becomes ``http://host:port``.
    """
    url = (explicit or os.environ.get(CDP_URL_ENV) or "").strip()
    if not url:
        return None
    if "://" not in url:
        url = f"http://{url}"
    return url


def browser_ws_url(http_url: str, timeout: float = 10.0) -> str:
    """Read the browser websocket URL from ``<http_url>/json/version`` (blocking)."""
    parts = urlsplit(http_url)
    version_url = f"{parts.scheme}://{parts.netloc}/json/version"
    try:
        with _DIRECT.open(version_url, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        raise CDPConnectError(
            http_url, f"{version_url} answered HTTP {exc.code}; that is not a CDP endpoint"
        ) from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CDPConnectError(http_url, f"{version_url} is unreachable ({reason})") from exc
    try:
        ws_url = json.loads(body)["webSocketDebuggerUrl"]
    except (ValueError, KeyError, TypeError) as exc:
        raise CDPConnectError(
            http_url, f"{version_url} has no webSocketDebuggerUrl; that is not a CDP endpoint"
        ) from exc
    if not isinstance(ws_url, str) or not ws_url.startswith(("ws://", "wss://")):
        raise CDPConnectError(http_url, f"{version_url} gave an odd websocket URL {ws_url!r}")
    return ws_url


async def connect(url: str | None = None, *, timeout: float = 10.0) -> CDPConnection:
    """Connect to a browser at ``url`` (``ws://...``, ``http://host:port`` or ``host:port``).

    Without ``url``, ``$VIEWFINDER_CDP_URL`` is used. Raises :class:`CDPConnectError`
    saying what was tried when no browser answers there.
    """
    resolved = resolve_cdp_url(url)
    if resolved is None:
        raise CDPConnectError("(no URL)", f"no CDP URL was given and ${CDP_URL_ENV} is not set")
    scheme = urlsplit(resolved).scheme
    if scheme in ("ws", "wss"):
        ws_url = resolved
    elif scheme in ("http", "https"):
        ws_url = await asyncio.to_thread(browser_ws_url, resolved, timeout)
    else:
        raise CDPConnectError(
            resolved, "the URL must start with ws://, wss://, http:// or https://"
        )
    return await CDPConnection.open(ws_url, timeout=timeout)
