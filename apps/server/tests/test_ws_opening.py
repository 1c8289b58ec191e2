"""A WebSocket whose session takes long to open: the socket is read from the start."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from websockets.sync.client import connect

from viewfinder.core import hookimpl
from viewfinder.server import LocalServer
from viewfinder.server.local_provider import LocalProvider

#: Longer than the client's keepalive allows (a ping every 0.5 s, 1 s for its pong).
OPEN_DELAY_S = 4.0


class SlowOpeningProvider(LocalProvider):
    """The local provider, each session taking :data:`OPEN_DELAY_S` to open, as a Ray
    actor does on a loaded cluster."""

    def open(self, session_id: str) -> Any:
        time.sleep(OPEN_DELAY_S)
        return super().open(session_id)


class SlowOpeningPlugin:
    @hookimpl
    def viewfinder_register_session_providers(self, register: Callable[..., None]) -> None:
        register("slow-opening", SlowOpeningProvider)


def test_pings_are_answered_and_the_reset_queued_while_the_session_opens(
    viewfinder_plugin: Callable[..., str], serve: Callable[..., LocalServer]
) -> None:
    viewfinder_plugin(SlowOpeningPlugin(), name="slow-opening-plugin")
    options = {"max_sessions": 1, "pool_size": 1, "width": 320, "height": 240}
    server = serve(provider="slow-opening", provider_options=options)
    url = server.base_url.replace("http://", "ws://") + "/ws"
    with connect(url, ping_interval=0.5, ping_timeout=1.0) as ws:
        # sent before the session is open, as OpenEnv's client does
        ws.send(json.dumps({"type": "reset", "data": {}}))
        ws.send(json.dumps({"type": "step", "data": {"code": "print('after the wait')"}}))
        opened_at = time.monotonic() + OPEN_DELAY_S
        while time.monotonic() < opened_at:  # keepalive runs meanwhile
            assert ws.ping().wait(5), "no pong: the server does not read the socket"
            time.sleep(0.5)
        reset = json.loads(ws.recv(timeout=60))
        step = json.loads(ws.recv(timeout=60))
    assert reset["type"] == "observation", reset
    assert step["data"]["observation"]["stdout"] == "after the wait\n"
