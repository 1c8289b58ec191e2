"""Steps end when their client wants: it leaves (WebSocket or HTTP), cancels, or resets."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import uuid
from typing import Any

import httpx
from websockets.sync.client import connect

from viewfinder.codeenv import CodeAction
from viewfinder.core.testing import processes_with_argument, wait_until
from viewfinder.server import CodingEnv, LocalServer


def busy_code(marker: str) -> str:
    """Step code that starts a child marked ``marker`` and then spins forever."""
    return f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])\nwhile True:\n    pass\n"


def new_marker() -> str:
    return f"{1000 + uuid.uuid4().int % 10**6 / 1000:.3f}"


def ws_url(server: LocalServer) -> str:
    return server.base_url.replace("http://", "ws://") + "/ws"


def active_sessions(server: LocalServer) -> int:
    count: int = httpx.get(f"{server.base_url}/health").json()["active_sessions"]
    return count


def test_a_websocket_client_that_leaves_cancels_its_step(server: LocalServer) -> None:
    marker = new_marker()
    with connect(ws_url(server), max_size=None) as ws:
        ws.send(json.dumps({"type": "reset"}))
        json.loads(ws.recv(timeout=60))
        ws.send(json.dumps({"type": "step", "data": {"code": busy_code(marker), "timeout_s": 120}}))
        wait_until(lambda: processes_with_argument(marker), "the step's child to start")
        ws.socket.shutdown(socket.SHUT_RDWR)  # the client goes away without a close frame
    wait_until(
        lambda: not processes_with_argument(marker) and active_sessions(server) == 0,
        "the step's processes to be killed and its session closed",
        timeout=10,
    )


def test_an_http_client_that_leaves_cancels_its_step(server: LocalServer) -> None:
    marker = new_marker()
    body = {"action": {"code": busy_code(marker)}, "timeout_s": 120}

    def post() -> None:
        with contextlib.suppress(httpx.TimeoutException):  # it gives up and hangs up
            httpx.post(f"{server.base_url}/step", json=body, timeout=3)

    client = threading.Thread(target=post)
    client.start()
    wait_until(lambda: processes_with_argument(marker), "the step's child to start")
    client.join(30)
    wait_until(
        lambda: not processes_with_argument(marker) and active_sessions(server) == 0,
        "the step's processes to be killed and its session closed",
        timeout=10,
    )


def test_cancel_stops_the_running_step_and_the_session_goes_on(server: LocalServer) -> None:
    marker = new_marker()
    with CodingEnv(server.base_url, token=server.settings.token) as env:
        env.reset()
        env.step("open('kept.txt', 'w').write('in the home')\nvalue = 1")
        results: list[Any] = []
        stepping = threading.Thread(
            target=lambda: results.append(
                env.step(CodeAction(code=busy_code(marker), timeout_s=120))
            )
        )
        stepping.start()
        wait_until(lambda: processes_with_argument(marker), "the step's child to start")
        env.cancel()
        stepping.join(30)
        (cancelled,) = results
        observation = cancelled.observation
        assert observation.exit_code == 130
        assert observation.metadata["cancelled"] == "cancelled by the client"
        assert not processes_with_argument(marker)
        # the next step runs in a fresh worker: globals are gone, files are kept
        after = env.step("print(open('kept.txt').read(), 'value' in globals())").observation
        assert after.stdout == "in the home False\n"
        assert after.metadata["worker_restarted"] is True
        env.cancel()  # nothing runs: nothing happens
        assert env.step("print(2)").observation.stdout == "2\n"


def test_a_reset_during_a_step_cancels_it(server: LocalServer) -> None:
    marker = new_marker()
    with connect(ws_url(server), max_size=None) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"episode_id": "first"}}))
        json.loads(ws.recv(timeout=60))
        ws.send(json.dumps({"type": "step", "data": {"code": busy_code(marker), "timeout_s": 120}}))
        wait_until(lambda: processes_with_argument(marker), "the step's child to start")
        ws.send(json.dumps({"type": "reset", "data": {"episode_id": "second"}}))
        step = json.loads(ws.recv(timeout=30))["data"]["observation"]
        assert step["exit_code"] == 130
        assert step["metadata"]["cancelled"] == "cancelled by a reset"
        reset = json.loads(ws.recv(timeout=60))["data"]["observation"]
        assert reset["metadata"]["episode_id"] == "second"
        assert not processes_with_argument(marker)
        ws.send(json.dumps({"type": "step", "data": {"code": "print('fresh')"}}))
        assert json.loads(ws.recv(timeout=60))["data"]["observation"]["stdout"] == "fresh\n"
