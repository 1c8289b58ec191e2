"""The token: required beyond loopback, checked on every request and WebSocket."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from viewfinder.server import (
    CodingEnv,
    InsecureBindError,
    LocalServer,
    ServerConnectionError,
    ServerSettings,
)

TOKEN = "s3cret-token-for-tests"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.org"])
def test_listening_beyond_loopback_needs_a_token(host: str) -> None:
    with pytest.raises(InsecureBindError, match="give a token"):
        ServerSettings(host=host)
    assert ServerSettings(host=host, token=TOKEN).token == TOKEN


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_needs_no_token(host: str) -> None:
    assert ServerSettings(host=host).token is None


def test_a_short_token_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 8 characters"):
        ServerSettings(token="short")


def test_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIEWFINDER_SERVER_TOKEN", TOKEN)
    assert ServerSettings.from_env(host="0.0.0.0").token == TOKEN


def test_every_request_and_websocket_needs_the_token(serve: Callable[..., LocalServer]) -> None:
    server = serve(token=TOKEN)
    base = server.base_url
    for path in ("/health", "/schema", "/state"):
        assert httpx.get(f"{base}{path}").status_code == 401
        assert (
            httpx.get(f"{base}{path}", headers={"Authorization": "Bearer wrong-token"}).status_code
            == 401
        )
    refused = httpx.post(f"{base}/step", json={"action": {"code": "1"}})
    assert refused.status_code == 401
    assert "missing or wrong token" in refused.json()["detail"]
    assert httpx.get(f"{base}/health", headers={"Authorization": f"Bearer {TOKEN}"}).is_success
    assert httpx.get(f"{base}/health", auth=("anyone", TOKEN)).is_success

    ws = base.replace("http://", "ws://") + "/ws"
    for headers in ({}, {"Authorization": "Bearer nope-nope-nope"}):
        with pytest.raises(InvalidStatus) as refused_ws:
            connect(ws, additional_headers=headers)
        assert refused_ws.value.response.status_code == 401

    with pytest.raises(ServerConnectionError, match="HTTP 401 \\(missing or wrong token\\)"):
        CodingEnv(base).reset()
    with CodingEnv(base, token=TOKEN) as env:
        assert env.step("print('in')").observation.stdout == "in\n"
