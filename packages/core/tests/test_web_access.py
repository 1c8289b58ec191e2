"""The guard every web surface shares: its rules, one ASGI call at a time.

The same rules against the four real servers on loopback (and a real Chromium) are in
tests/test_web_surfaces.py.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from viewfinder.core.web_access import (
    InvalidTokenError,
    Message,
    Scope,
    UnguardedAppError,
    WebAccess,
    WebGuard,
    checked_token,
    guard,
    is_guarded,
    is_loopback,
    require_guard,
)

HOST = (b"host", b"127.0.0.1:8765")


async def app(scope: Scope, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await send({"type": "lifespan.startup.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


async def run(
    gate: WebGuard,
    scope_type: str = "http",
    headers: Any = (HOST,),
    query: bytes = b"",
    method: str = "GET",
    path: str = "/",
) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "websocket.connect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": scope_type,
        "headers": list(headers),
        "query_string": query,
        "method": method,
        "path": path,
        "scheme": "ws" if scope_type == "websocket" else "http",
        "server": ("127.0.0.1", 8765),
    }
    await gate(scope, receive, send)
    return sent


def status(sent: list[Message]) -> int | None:
    return next((m["status"] for m in sent if m["type"].endswith("response.start")), None)


def headers_of(sent: list[Message]) -> dict[bytes, bytes]:
    return dict(next(m["headers"] for m in sent if m["type"].endswith("response.start")))


def gate(**access: Any) -> WebGuard:
    return WebGuard(app, WebAccess(**access))


@pytest.mark.parametrize(
    ("headers", "allowed"),
    [
        ([(b"authorization", b"Bearer s3cret-token")], True),
        ([(b"Authorization", b"bearer   s3cret-token ")], True),
        ([(b"authorization", b"Basic " + base64.b64encode(b"anyone:s3cret-token"))], True),
        ([(b"authorization", b"Bearer wrong")], False),
        ([(b"authorization", b"Basic !!not-base64")], False),
        ([(b"x-token", b"s3cret-token")], False),
        ([], False),
    ],
)
async def test_header_tokens(headers: list[tuple[bytes, bytes]], allowed: bool) -> None:
    sent = await run(gate(token="s3cret-token"), headers=[HOST, *headers])
    assert status(sent) == (200 if allowed else 401)
    if not allowed:
        assert json.loads(sent[1]["body"]) == {
            "detail": "missing or wrong token: send 'Authorization: Bearer TOKEN'"
        }


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        (b"127.0.0.1:8765", True),
        (b"localhost:8765", True),
        (b"LOCALHOST", True),
        (b"[::1]:8765", True),
        (b"127.9.9.9", True),
        (b"rebind.test:8765", False),
        (b"evil.example", False),
        (b"127.0.0.1.nip.io:8765", False),
        (b"user@127.0.0.1", False),
        (b"", False),
    ],
)
async def test_only_loopback_names_and_the_bound_address_are_served(
    host: bytes, allowed: bool
) -> None:
    sent = await run(gate(), headers=[(b"host", host)])
    assert status(sent) == (200 if allowed else 421)
    if not allowed:
        assert "127.0.0.1" in json.loads(sent[1]["body"])["detail"]


async def test_no_host_header_is_refused_and_the_bound_address_is_served() -> None:
    assert status(await run(gate(), headers=[])) == 421
    lan = gate(host="192.168.7.7", token="s3cret-token")
    bearer = (b"authorization", b"Bearer s3cret-token")
    assert status(await run(lan, headers=[(b"host", b"192.168.7.7:1"), bearer])) == 200
    assert status(await run(lan, headers=[(b"host", b"evil.example"), bearer])) == 421
    anywhere = gate(host="0.0.0.0", token="s3cret-token")
    assert status(await run(anywhere, headers=[(b"host", b"box.lan"), bearer])) == 200
    assert status(await run(anywhere, headers=[(b"host", b"box.lan")])) == 401


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        (b"http://127.0.0.1:8765", True),
        (b"HTTP://127.0.0.1:8765", True),
        (b"null", False),
        (b"http://127.0.0.1:8766", False),
        (b"http://localhost:8765", False),
        (b"https://127.0.0.1:8765", False),
        (b"http://evil.example", False),
        (b"file://", False),
        (b"http://127.0.0.1:notaport", False),
    ],
)
@pytest.mark.parametrize("scope_type", ["http", "websocket"])
async def test_only_the_apps_own_origin(
    origin: bytes | None, allowed: bool, scope_type: str
) -> None:
    headers = [HOST] + ([(b"origin", origin)] if origin is not None else [])
    sent = await run(gate(), scope_type, headers=headers)
    if allowed:
        assert status(sent) == 200
    elif scope_type == "http":
        assert status(sent) == 403 and "other origins" in json.loads(sent[1]["body"])["detail"]
    else:  # without the denial extension the handshake is closed
        assert sent == [{"type": "websocket.close", "code": 1008, "reason": sent[0]["reason"]}]
        assert "other origins" in sent[0]["reason"]


@pytest.mark.parametrize(
    ("method", "content_type", "allowed"),
    [
        ("POST", b"application/json", True),
        ("POST", b"application/json; charset=utf-8", True),
        ("POST", b"application/vnd.api+json", True),
        ("POST", b"text/plain", False),
        ("POST", b"application/x-www-form-urlencoded", False),
        ("POST", b"multipart/form-data; boundary=x", False),
        ("POST", None, False),
        ("PUT", b"text/plain", False),
        ("DELETE", None, True),
        ("DELETE", b"text/plain", False),
        ("GET", None, True),
    ],
)
async def test_state_changes_need_a_json_body(
    method: str, content_type: bytes | None, allowed: bool
) -> None:
    headers = [HOST] + ([(b"content-type", content_type)] if content_type else [])
    sent = await run(gate(), headers=headers, method=method)
    assert status(sent) == (200 if allowed else 415)


async def test_every_answer_forbids_framing() -> None:
    for sent in (
        await run(gate()),
        await run(gate(token="s3cret-token")),
        await run(gate(), headers=[(b"host", b"evil.example")]),
    ):
        found = headers_of(sent)
        assert found[b"x-frame-options"] == b"DENY"
        assert found[b"content-security-policy"] == b"frame-ancestors 'none'"


async def test_a_websocket_refusal_is_an_http_status_where_the_server_can_send_one() -> None:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "websocket",
        "headers": [HOST, (b"origin", b"null")],
        "extensions": {"websocket.http.response": {}},
        "server": ("127.0.0.1", 8765),
    }
    await gate()(scope, lambda: None, send)  # type: ignore[arg-type]
    assert sent[0]["type"] == "websocket.http.response.start" and sent[0]["status"] == 403


async def test_a_pages_app_serves_its_shell_without_the_token_and_sets_no_cookie() -> None:
    pages = gate(token="s3cret-token", pages=True, name="vf")
    for path in ("/", "/static/viewer.js"):
        shell = await run(pages, path=path)
        assert status(shell) == 200 and b"set-cookie" not in headers_of(shell)
    # the token in the address is neither needed for the shell nor taken as a credential
    assert b"set-cookie" not in headers_of(await run(pages, query=b"token=s3cret-token"))
    assert status(await run(pages, path="/api/info", query=b"token=s3cret-token")) == 401
    # data needs the header; a cookie, whatever its name, is no token
    assert status(await run(pages, path="/api/info")) == 401
    cookie = (b"cookie", b"vf_token_8765=s3cret-token")
    assert status(await run(pages, path="/api/info", headers=[HOST, cookie])) == 401
    bearer = (b"authorization", b"Bearer s3cret-token")
    assert status(await run(pages, path="/api/info", headers=[HOST, bearer])) == 200
    # only a GET of the shell goes without it
    assert status(await run(pages, method="HEAD", path="/")) == 200
    body = (b"content-type", b"application/json")
    assert status(await run(pages, method="POST", path="/", headers=[HOST, body])) == 401
    # an app without pages serves nothing without the token
    assert status(await run(gate(token="s3cret-token"), path="/")) == 401


async def test_a_websocket_of_a_pages_app_carries_the_token_as_a_subprotocol() -> None:
    accepted: list[Message] = []

    async def ws_app(scope: Scope, receive: Any, send: Any) -> None:
        await send({"type": "websocket.accept", "subprotocol": None, "headers": []})

    async def send(message: Message) -> None:
        accepted.append(message)

    encoded = base64.urlsafe_b64encode(b"s3cret-token").decode().rstrip("=")
    for offered, admitted in (
        ([f"viewfinder-token.{encoded}"], True),
        (["viewfinder-token.bm9wZS1ub3BlLW5vcGU"], False),
        ([], False),
    ):
        accepted.clear()
        scope = {
            "type": "websocket",
            "headers": [HOST],
            "path": "/api/live",
            "scheme": "ws",
            "server": ("127.0.0.1", 8765),
            "subprotocols": offered,
            "extensions": {"websocket.http.response": {}},
        }
        guarded = WebGuard(ws_app, WebAccess(token="s3cret-token", pages=True))
        await guarded(scope, lambda: None, send)  # type: ignore[arg-type]
        if admitted:  # answered with the subprotocol offered, as a browser requires
            assert accepted == [
                {"type": "websocket.accept", "subprotocol": offered[0], "headers": []}
            ]
        else:
            assert accepted[0]["status"] == 401


@pytest.mark.parametrize("token", ["", "   ", "\t\n", "short", " short  "])
def test_a_token_no_client_can_send_or_too_short_is_refused(token: str) -> None:
    with pytest.raises(InvalidTokenError, match="at least 8"):
        checked_token(token)
    with pytest.raises(InvalidTokenError):
        WebAccess(token=token)


def test_tokens_are_stripped_and_every_address_needs_one() -> None:
    assert checked_token("  long-enough-token \n") == "long-enough-token"
    assert WebAccess(token=" long-enough-token ").token == "long-enough-token"
    assert checked_token(None) is None
    with pytest.raises(InvalidTokenError, match="needs a token"):
        WebAccess(host="0.0.0.0")


async def test_lifespan_passes_and_the_refusal_body_can_be_shaped() -> None:
    shaped = gate(token="s3cret-token", hint="say the word", body=lambda hint: {"error": hint})
    assert await run(shaped, "lifespan") == [{"type": "lifespan.startup.complete"}]
    refused = await run(shaped)
    assert json.loads(refused[1]["body"]) == {"error": "say the word"}


def test_only_guarded_apps_can_be_served() -> None:
    from fastapi import FastAPI

    with pytest.raises(UnguardedAppError, match="WebGuard"):
        require_guard(FastAPI())
    with pytest.raises(UnguardedAppError):
        require_guard(app)
    wrapped = guard(app, WebAccess())
    assert isinstance(wrapped, WebGuard) and require_guard(wrapped) is wrapped
    fastapi_app = FastAPI()
    assert guard(fastapi_app, WebAccess()) is fastapi_app and is_guarded(fastapi_app)
    # middleware added after the guard would run before it: not guarded any more
    fastapi_app.add_middleware(WebGuard, access=WebAccess())
    assert is_guarded(fastapi_app)
    later = FastAPI()
    guard(later, WebAccess())
    later.add_middleware(type("Other", (), {"__init__": lambda self, app: None}))
    assert not is_guarded(later)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.2", False),
        ("example.org", False),
        ("", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
