"""The token gate and the address rule the server, the MCP server and the viewer share."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from viewfinder.core.web_access import Message, Scope, TokenAuth, is_loopback


async def app(scope: Scope, receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await send({"type": "lifespan.startup.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


async def run(
    gate: TokenAuth, scope_type: str = "http", headers: Any = (), query: bytes = b""
) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "websocket.connect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": scope_type, "headers": list(headers), "query_string": query}
    await gate(scope, receive, send)
    return sent


def status(sent: list[Message]) -> int | None:
    return next((m["status"] for m in sent if m["type"].endswith("response.start")), None)


@pytest.mark.parametrize(
    ("headers", "allowed"),
    [
        ([(b"authorization", b"Bearer s3cret")], True),
        ([(b"Authorization", b"bearer   s3cret ")], True),
        ([(b"authorization", b"Basic " + base64.b64encode(b"anyone:s3cret"))], True),
        ([(b"authorization", b"Bearer wrong")], False),
        ([(b"authorization", b"Basic !!not-base64")], False),
        ([(b"x-token", b"s3cret")], False),
        ([], False),
    ],
)
async def test_header_tokens(headers: list[tuple[bytes, bytes]], allowed: bool) -> None:
    sent = await run(TokenAuth(app, "s3cret"), headers=headers)
    assert status(sent) == (200 if allowed else 401)
    if not allowed:
        assert json.loads(sent[1]["body"]) == {
            "detail": "missing or wrong token: send 'Authorization: Bearer TOKEN'"
        }


async def test_a_refused_websocket_is_closed_or_denied() -> None:
    closed = await run(TokenAuth(app, "s3cret"), "websocket")
    assert closed == [{"type": "websocket.close", "code": 1008, "reason": "missing or wrong token"}]


async def test_lifespan_passes_and_the_refusal_body_can_be_shaped() -> None:
    gate = TokenAuth(app, "s3cret", hint="say the word", body=lambda hint: {"error": hint})
    assert await run(gate, "lifespan") == [{"type": "lifespan.startup.complete"}]
    refused = await run(gate)
    assert json.loads(refused[1]["body"]) == {"error": "say the word"}


async def test_a_token_in_the_address_sets_the_cookie_the_page_then_sends() -> None:
    gate = TokenAuth(app, "s3cret", cookie="vf", query_param="token")
    first = await run(gate, query=b"token=s3cret")
    assert status(first) == 200
    cookie = dict(first[0]["headers"])[b"set-cookie"]
    assert cookie.startswith(b"vf=s3cret;") and b"HttpOnly" in cookie
    later = await run(gate, headers=[(b"cookie", b"other=1; vf=s3cret")])
    assert status(later) == 200 and b"set-cookie" not in dict(later[0]["headers"])
    assert status(await run(gate, headers=[(b"cookie", b"vf=nope")])) == 401
    assert status(await run(gate, headers=[(b"cookie", b'\x00"bad')])) == 401
    assert status(await run(gate, query=b"token=nope")) == 401
    # without those options the gate looks at headers only
    assert status(await run(TokenAuth(app, "s3cret"), query=b"token=s3cret")) == 401


def test_an_empty_token_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty token"):
        TokenAuth(app, "")


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
