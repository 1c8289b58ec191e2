"""The WebSocket session protocol, spoken raw, on a real server on loopback."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from websockets.sync.client import ClientConnection, connect

from viewfinder.server import LocalServer


def ask(ws: ClientConnection, message: Any) -> dict[str, Any]:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=60))
    return reply


def ws_url(server: LocalServer) -> str:
    return server.base_url.replace("http://", "ws://") + "/ws"


def test_a_session_keeps_its_globals_until_reset(server: LocalServer) -> None:
    with connect(ws_url(server), max_size=None) as ws:
        reset = ask(ws, {"type": "reset", "data": {"episode_id": "ep-1"}})
        assert reset["type"] == "observation"
        assert reset["data"]["observation"]["metadata"]["episode_id"] == "ep-1"
        ask(ws, {"type": "step", "data": {"code": "total = 40"}})
        step = ask(ws, {"type": "step", "data": {"code": "print(total + 2)"}})
        assert step["data"]["observation"]["stdout"] == "42\n"
        state = ask(ws, {"type": "state"})
        assert state == {
            "type": "state",
            "data": {"episode_id": "ep-1", "step_count": 2, "last_exit_code": 0},
        }
        ask(ws, {"type": "reset"})
        gone = ask(ws, {"type": "step", "data": {"code": "total"}})
        assert "NameError" in gone["data"]["observation"]["stderr"]
        ws.send(json.dumps({"type": "close"}))
    assert _health(server)["active_sessions"] == 0


def _health(server: LocalServer) -> dict[str, Any]:
    import httpx

    from viewfinder.core.testing import wait_until

    # the server closes the session after the socket closed: wait for it
    wait_until(
        lambda: httpx.get(f"{server.base_url}/health").json()["active_sessions"] == 0,
        "the session to close",
    )
    result: dict[str, Any] = httpx.get(f"{server.base_url}/health").json()
    return result


def test_bad_messages_get_error_messages_and_the_session_goes_on(server: LocalServer) -> None:
    with connect(ws_url(server)) as ws:
        cases = [
            ("{oops", "INVALID_JSON", "not valid JSON"),
            ("[1, 2]", "VALIDATION_ERROR", "must be a JSON object"),
            ({"type": "dance"}, "UNKNOWN_TYPE", "unknown message type 'dance'"),
            (
                {"type": "step", "data": {"code": 1}},
                "VALIDATION_ERROR",
                "data.code: Input should be a valid string",
            ),
            (
                {"type": "step", "data": {"code": "x", "lang": "py"}},
                "VALIDATION_ERROR",
                "data.lang: Extra inputs",
            ),
            ({"type": "step"}, "VALIDATION_ERROR", "data: Field required"),
            ({"type": "state", "extra": True}, "VALIDATION_ERROR", "extra: Extra inputs"),
            ({"type": "reset", "data": {"seed": -1}}, "VALIDATION_ERROR", "data.seed"),
            (
                '{"type": "step", "data": {"code": "x", "timeout_s": Infinity}}',
                "VALIDATION_ERROR",
                "data.timeout_s: Input should be a finite number",
            ),
            (
                {"type": "step", "data": {"code": "x", "timeout_s": 1e300}},
                "VALIDATION_ERROR",
                "data.timeout_s: Input should be less than or equal to 86400",
            ),
            (
                {"type": "step", "data": {"code": "x", "capture_screenshot": "yes"}},
                "VALIDATION_ERROR",
                "data.capture_screenshot: Input should be a valid boolean",
            ),
        ]
        for message, code, reason in cases:
            reply = ask(ws, message)
            assert reply["type"] == "error", message
            assert reply["data"]["code"] == code
            assert reason in reply["data"]["message"]
        ws.send(b'{"type": "state"}')  # a binary frame
        binary = json.loads(ws.recv(timeout=60))
        assert binary["type"] == "error" and "binary frames" in binary["data"]["message"]
        deep = ask(ws, "[" * 100_000 + "]" * 100_000)
        assert deep["type"] == "error" and deep["data"]["code"] == "INVALID_JSON"
        step = ask(ws, {"type": "step", "data": {"code": "print('fine')"}})
        assert step["data"]["observation"]["stdout"] == "fine\n"


def test_the_session_cap_answers_capacity_reached(serve: Callable[..., LocalServer]) -> None:
    server = serve(max_sessions=2)
    with connect(ws_url(server)), connect(ws_url(server)), connect(ws_url(server)) as third:
        reply = json.loads(third.recv(timeout=30))
        assert reply["type"] == "error"
        assert reply["data"]["code"] == "CAPACITY_REACHED"
        assert (reply["data"]["active_sessions"], reply["data"]["max_sessions"]) == (2, 2)
        assert "maximum (2)" in reply["data"]["message"]
