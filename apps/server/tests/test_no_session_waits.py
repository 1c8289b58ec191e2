"""One session's big reply holds no other session: replies are written as JSON on a
worker thread, and sent without compression on the event loop (docs/decisions.md, 32)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from websockets.sync.client import connect

from viewfinder.codeenv import models
from viewfinder.server import LocalServer


def ws_url(server: LocalServer) -> str:
    return server.base_url.replace("http://", "ws://") + "/ws"


def step(ws: Any, code: str) -> dict[str, Any]:
    ws.send(json.dumps({"type": "step", "data": {"code": code}}))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=60))
    return reply["data"]["observation"]


def test_the_server_does_not_compress_replies(server: LocalServer) -> None:
    # permessage-deflate runs on the event loop: ~30 MB of captures took every other
    # session's turn for over a second. The client offers it; the server declines.
    with connect(ws_url(server)) as ws:
        assert "permessage-deflate" in (ws.request.headers.get("Sec-WebSocket-Extensions") or "")
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
        assert step(ws, "print('plain')")["stdout"] == "plain\n"


def test_a_session_steps_while_another_reply_is_being_written(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writing of one reply is held until the other session has stepped: were it
    # done on the event loop, the other step could never be answered meanwhile.
    writing, release = threading.Event(), threading.Event()
    original = models.observation_json

    def slowed(observation: models.CodeObservation, *args: Any, **kwargs: Any) -> str:
        if observation.stdout == "big\n":
            writing.set()
            release.wait(60)
        return original(observation, *args, **kwargs)

    monkeypatch.setattr(models, "observation_json", slowed)
    replies: list[dict[str, Any]] = []
    with connect(ws_url(server)) as big, connect(ws_url(server)) as small:
        holder = threading.Thread(target=lambda: replies.append(step(big, "print('big')")))
        holder.start()
        try:
            assert writing.wait(60), "the big reply was never written"
            assert step(small, "x = 1\nprint(x + 1)")["stdout"] == "2\n"
            assert holder.is_alive() and not replies  # the big one still being written
        finally:
            release.set()
            holder.join(60)
    assert replies[0]["stdout"] == "big\n"
