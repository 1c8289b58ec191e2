"""Who may use a viewfinder app served over HTTP: one guard in front of every web surface.

``viewfinder serve``, ``mcp --http`` and ``view`` listen on loopback, where every web
page the user opens can reach them. :class:`WebGuard`, a plain ASGI middleware (the
standard library only), stands in front of each; nothing reaches a route without it
(docs/security.md):

- **Host allow-list** (DNS rebinding): the ``Host`` must name a loopback address
  (``127.0.0.0/8``, ``::1``, ``localhost``) or the address the app listens on; anything
  else gets 421. An app bound to every interface (``0.0.0.0``) needs a token, and then
  takes any name.
- **Origin**: a request or WebSocket handshake that carries an ``Origin`` must come from
  the app's own origin (scheme, host and port of its ``Host``); ``null`` or any other
  gets 403. A WebSocket carries cookies and no CORS, so its handshake is checked here.
  A request without ``Origin`` (a script, curl, an MCP client) passes on to the token.
- **No state change from a CORS-simple request**: ``POST``/``PUT``/``PATCH`` (and a
  ``DELETE`` with a body) must be ``Content-Type: application/json`` (or ``+json``),
  which a page of another origin cannot send without a preflight; otherwise 415.
- **No framing**: every response carries ``X-Frame-Options: DENY`` and
  ``Content-Security-Policy: frame-ancestors 'none'``.
- **Token** (when the app has one; any address beyond loopback needs one):
  ``Authorization: Bearer TOKEN``, HTTP basic auth with the token as the password
  (``http://user:TOKEN@host:port``). An app that serves pages (``pages``) serves its
  page shell (``/`` and ``/static/...``, which hold no data) without the token; the page
  reads the token from its address's fragment (``#token=TOKEN``, which no browser sends
  to a server), keeps it for its own origin (scheme, host and port: ``sessionStorage``)
  and sends it as the ``Authorization`` header, or for a WebSocket as the subprotocol
  ``viewfinder-token.<base64url of TOKEN>`` (the guard answers with it). No cookie is
  ever set: a cookie ignores ports, so a server on another port of the host would get
  it with every request the browser sends there.
  Tokens are stripped and at least :data:`MIN_TOKEN_LENGTH` characters long.

A refused WebSocket handshake gets the HTTP status (the ASGI denial-response extension)
or else a close with code 1008. Apps are built with :func:`guard` and served only
through :func:`require_guard`: an app without the guard cannot be served.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, overload
from urllib.parse import urlsplit

from viewfinder.core.errors import ViewfinderError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
App = TypeVar("App")

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
#: The shortest token accepted (after stripping spaces around it).
MIN_TOKEN_LENGTH = 8
DEFAULT_HINT = "missing or wrong token: send 'Authorization: Bearer TOKEN'"
_DENIAL = "websocket.http.response"
#: A WebSocket's subprotocol carrying the token (base64url after it): a browser's
#: WebSocket cannot send an ``Authorization`` header.
TOKEN_PROTOCOL = "viewfinder-token."
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_FRAMING = [
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
]


class InvalidTokenError(ViewfinderError, ValueError):
    """A token that no client could send, or too short to keep anyone out."""


class UnguardedAppError(ViewfinderError, RuntimeError):
    """An app about to be served without :class:`WebGuard` in front of it."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is an address of this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checked_token(token: str | None) -> str | None:
    """``token`` without the spaces around it; :class:`InvalidTokenError` when what is
    left is shorter than :data:`MIN_TOKEN_LENGTH` characters. None stays None."""
    if token is None:
        return None
    stripped = token.strip()
    if not stripped:
        raise InvalidTokenError(
            "the token is empty or only spaces; give at least "
            f"{MIN_TOKEN_LENGTH} characters (e.g. python -c 'import secrets; "
            "print(secrets.token_urlsafe())')"
        )
    if len(stripped) < MIN_TOKEN_LENGTH:
        raise InvalidTokenError(
            f"the token must be at least {MIN_TOKEN_LENGTH} characters long (spaces around "
            f"it do not count); this one has {len(stripped)}"
        )
    return stripped


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
            return decoded.partition(":")[2].strip()
    return None


def json_detail(hint: str) -> dict[str, Any]:
    """The default body of a refusal: ``{"detail": hint}``."""
    return {"detail": hint}


@dataclass(frozen=True)
class WebAccess:
    """Who may use one app, and how it says no.

    ``host``: the address the app listens on (allowed in ``Host`` besides loopback
    names). ``token``: what every request must present (None: no token; only for
    loopback). ``pages``: the app serves pages to a browser, so its page shell (a ``GET``
    of ``/`` or under ``/static/``) is served without the token, and a WebSocket may
    carry it as a subprotocol (see the module docstring). ``hint`` says how to send the
    token and ``body(hint)`` shapes a refusal's JSON (default ``{"detail": hint}``; the
    MCP server answers a JSON-RPC error). ``name`` names the app.
    """

    host: str = "127.0.0.1"
    token: str | None = None
    pages: bool = False
    hint: str = DEFAULT_HINT
    body: Callable[[str], Any] = field(default=json_detail, compare=False)
    name: str = "viewfinder"

    def __post_init__(self) -> None:
        object.__setattr__(self, "token", checked_token(self.token))
        if self.host.strip("[]").lower() in WILDCARD_HOSTS and self.token is None:
            raise InvalidTokenError(
                f"listening on {self.host or 'every address'} needs a token that every "
                "client must present"
            )


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _split_host(value: str) -> tuple[str, int | None]:
    """``"[::1]:8000"`` -> ``("::1", 8000)``; ValueError when it is not host[:port]."""
    parts = urlsplit(f"//{value}")
    hostname = parts.hostname
    if not hostname or parts.username is not None or parts.path or parts.query:
        raise ValueError(value)
    return hostname.lower(), parts.port


def _origin_of(scope: Scope, host: str) -> tuple[str, str, int]:
    """The app's own origin (scheme, host, port) as a page that reached ``host`` sees it."""
    secure = scope.get("scheme") in ("https", "wss")
    hostname, port = _split_host(host)
    return ("https" if secure else "http", hostname, port or (443 if secure else 80))


class WebGuard:
    """The ASGI middleware that checks every request and WebSocket handshake against
    ``access`` (see the module docstring). Other ASGI scopes (lifespan) pass through."""

    def __init__(self, app: ASGIApp, access: WebAccess) -> None:
        self.app = app
        self.access = access
        self._token = access.token.encode("utf-8") if access.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            status, reason = refusal
            await self._refuse(scope, receive, send, status, reason)
            return
        if self._token is not None:
            allowed, protocol = self._presented(scope)
            if not allowed:
                await self._refuse(scope, receive, send, 401, self.access.hint)
                return
            if protocol is not None:
                send = _answering(send, protocol)
        await self.app(scope, receive, _framed(send) if scope["type"] == "http" else send)

    # -- the checks ----------------------------------------------------------------------

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        host = _header(scope, b"host")
        if host is None:
            return 421, "no Host header: say which server you meant"
        try:
            hostname, _ = _split_host(host)
        except ValueError:
            return 421, f"the Host {host[:80]!r} is not a host name; open http://127.0.0.1:PORT/"
        if not self._host_allowed(scope, hostname):
            return 421, (
                f"this server answers to its own address and loopback names, not "
                f"{hostname[:80]!r}; open it as http://127.0.0.1:PORT/"
            )
        origin = _header(scope, b"origin")
        if origin is not None and not self._same_origin(scope, host, origin):
            return 403, (
                f"requests from other origins ({origin[:80]}) are refused: a web page may "
                "not use this server"
            )
        method = scope.get("method", "GET")
        content_type = (_header(scope, b"content-type") or "").partition(";")[0].strip().lower()
        body_expected = method in _BODY_METHODS or (method == "DELETE" and content_type)
        if scope["type"] == "http" and body_expected and not _is_json(content_type):
            return 415, (
                f"{method} needs 'Content-Type: application/json' (got "
                f"{content_type[:60] or 'none'!r}); a form or text/plain body is refused"
            )
        return None

    def _host_allowed(self, scope: Scope, hostname: str) -> bool:
        if is_loopback(hostname):
            return True
        bound = {self.access.host.strip("[]").lower()}
        server = scope.get("server")
        if server:
            bound.add(str(server[0]).strip("[]").lower())
        if hostname in bound:
            return True
        # bound to every interface: only with a token (WebAccess insists), which a
        # rebinding page has not got
        return bool(bound & WILDCARD_HOSTS)

    @staticmethod
    def _same_origin(scope: Scope, host: str, origin: str) -> bool:
        if origin.strip().lower() == "null":
            return False
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        return (parts.scheme, parts.hostname.lower(), port) == _origin_of(scope, host)

    def _matches(self, given: str | None) -> bool:
        assert self._token is not None
        return given is not None and hmac.compare_digest(given.encode("utf-8"), self._token)

    def _port(self, scope: Scope) -> int | None:
        server = scope.get("server")
        return int(server[1]) if server and server[1] is not None else None

    def _presented(self, scope: Scope) -> tuple[bool, str | None]:
        """(allowed, the WebSocket subprotocol that carried the token) for this request."""
        if self._matches(presented_token(scope.get("headers", []))):
            return True, None
        if not self.access.pages:
            return False, None
        if scope["type"] == "websocket":
            for offered in scope.get("subprotocols") or []:
                if offered.startswith(TOKEN_PROTOCOL) and self._matches(
                    _unbase64url(offered[len(TOKEN_PROTOCOL) :])
                ):
                    return True, offered
            return False, None
        path = scope.get("path", "")
        shell = path == "/" or path.startswith("/static/")
        return scope.get("method") in ("GET", "HEAD") and shell, None

    # -- the answers ---------------------------------------------------------------------

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, status: int, reason: str
    ) -> None:
        body = json.dumps(self.access.body(reason)).encode("utf-8")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode("ascii")),
            *_FRAMING,
        ]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="viewfinder"'))
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif _DENIAL in scope.get("extensions", {}):
            await send(
                {"type": "websocket.http.response.start", "status": status, "headers": headers}
            )
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await receive()  # the websocket.connect event
            await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})


def _unbase64url(text: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _answering(send: Send, protocol: str) -> Send:
    """``send`` that accepts a WebSocket with the subprotocol the client offered (a
    browser drops a connection whose offered subprotocol is not answered)."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "websocket.accept" and not message.get("subprotocol"):
            message = {**message, "subprotocol": protocol}
        await send(message)

    return wrapped


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or (
        content_type.startswith("application/") and content_type.endswith("+json")
    )


def _framed(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *_FRAMING]
        await send(message)

    return wrapped


class MiddlewareHost(Protocol):
    """An app that takes middleware (Starlette, FastAPI)."""

    def add_middleware(self, middleware_class: Any, *args: Any, **kwargs: Any) -> None: ...


Hosting = TypeVar("Hosting", bound=MiddlewareHost)


@overload
def guard(app: Hosting, access: WebAccess) -> Hosting: ...
@overload
def guard(app: ASGIApp, access: WebAccess) -> WebGuard: ...
def guard(app: Any, access: WebAccess) -> Any:
    """``app`` behind :class:`WebGuard`: a Starlette/FastAPI app gets it as its outermost
    middleware (and stays the app, with its ``state``); any other ASGI app is wrapped."""
    if hasattr(app, "add_middleware"):
        app.add_middleware(WebGuard, access=access)
        return app
    return WebGuard(app, access)


def is_guarded(app: object) -> bool:
    """Whether nothing reaches ``app``'s routes without passing :class:`WebGuard`."""
    if isinstance(app, WebGuard):
        return True
    middleware = getattr(app, "user_middleware", None) or []
    return bool(middleware) and getattr(middleware[0], "cls", None) is WebGuard


def require_guard(app: App) -> App:
    """``app``, or :class:`UnguardedAppError` when it is not behind :class:`WebGuard`:
    every server of viewfinder calls this before it serves."""
    if not is_guarded(app):
        raise UnguardedAppError(
            f"{type(app).__name__} is not behind viewfinder.core.web_access.WebGuard; "
            "build it with web_access.guard(app, WebAccess(...)) before serving it"
        )
    return app
