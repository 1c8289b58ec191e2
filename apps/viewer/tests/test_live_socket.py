"""``/api/live`` on the wire: shared feeds, read-only by default, refusals that say why."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from viewfinder.core.testing import wait_until
from viewfinder.viewer import ViewerServer
from viewfinder.xvfb import Display


def socket_to(viewer: ViewerServer, display: str) -> ClientConnection:
    url = viewer.url.replace("http://", "ws://") + f"/api/live?display={display}"
    return connect(url, open_timeout=10, close_timeout=5)


def next_frame(client: ClientConnection) -> dict[str, Any]:
    """The header of the next frame message (text messages are skipped)."""
    while True:
        message = client.recv(timeout=10)
        if isinstance(message, bytes):
            (length,) = struct.unpack(">I", message[:4])
            header: dict[str, Any] = json.loads(message[4 : 4 + length])
            return header


def test_several_pages_share_one_feed_and_each_starts_with_a_whole_frame(
    display: Display, serve: Callable[..., ViewerServer]
) -> None:
    viewer = serve(live=(display.name,))
    with socket_to(viewer, display.name) as first, socket_to(viewer, display.name) as second:
        for client in (first, second):
            hello = json.loads(client.recv(timeout=10))
            assert hello["type"] == "hello" and not hello["control"]
            assert (hello["width"], hello["height"]) == (800, 600)
            key = next_frame(client)
            assert key["key"] and (key["w"], key["h"]) == (800, 600)
        assert len(viewer.server.config.app.state.feeds.feeds()) == 1  # type: ignore[attr-defined]
        subprocess.run(["xsetroot", "-solid", "#123456"], env=display.env(), check=True, timeout=20)
        for client in (first, second):
            change = next_frame(client)
            assert not change["key"]  # only what changed: here the whole root
    # the last page gone, the feed stops
    wait_until(
        lambda: not viewer.server.config.app.state.feeds.feeds(),  # type: ignore[attr-defined]
        "the feed to stop",
        timeout=10,
    )


def test_a_read_only_view_refuses_input_and_stays_open(
    display: Display, serve: Callable[..., ViewerServer]
) -> None:
    viewer = serve(live=(display.name,))
    with socket_to(viewer, display.name) as client:
        assert json.loads(client.recv(timeout=10))["type"] == "hello"
        client.send(json.dumps({"kind": "click", "position": {"x": 5, "y": 5}}))
        reply = None
        while reply is None:
            message = client.recv(timeout=10)
            if isinstance(message, str):
                reply = json.loads(message)
        assert reply["type"] == "error" and "read-only" in reply["message"]
        assert "--control" in reply["message"]
        client.ping().wait(5)  # still open


def test_bad_actions_are_answered_and_the_connection_stays(
    display: Display, serve: Callable[..., ViewerServer]
) -> None:
    viewer = serve(live=(display.name,), control=True)
    with socket_to(viewer, display.name) as client:
        assert json.loads(client.recv(timeout=10))["control"] is True
        replies = []
        for action in (
            "not json",
            json.dumps({"kind": "click"}),  # a click needs a position
            json.dumps({"kind": "wait", "duration_s": 60}),
            json.dumps({"kind": "move", "position": {"x": 3, "y": 4}}),
        ):
            client.send(action)
            while True:
                message = client.recv(timeout=10)
                if isinstance(message, str):
                    replies.append(json.loads(message))
                    break
        assert [reply["type"] for reply in replies] == ["error", "error", "error", "done"]
        assert "not an action" in replies[0]["message"]
        assert "wait is not allowed" in replies[2]["message"]


@pytest.mark.parametrize("display_name", [":4242", "remote:1", "../../etc"])
def test_a_display_the_viewer_was_not_given_is_refused(
    display: Display, serve: Callable[..., ViewerServer], display_name: str
) -> None:
    viewer = serve(live=(display.name,))
    with socket_to(viewer, display_name) as client, pytest.raises(ConnectionClosed) as closed:
        client.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert "not one this viewer shows" in closed.value.rcvd.reason


def test_frames_can_be_webp(display: Display, serve: Callable[..., ViewerServer]) -> None:
    viewer = serve(live=(display.name,), live_format="webp")
    with socket_to(viewer, display.name) as client:
        assert json.loads(client.recv(timeout=10))["format"] == "webp"
        while True:
            message = client.recv(timeout=10)
            if isinstance(message, bytes):
                break
        (length,) = struct.unpack(">I", message[:4])
        header = json.loads(message[4 : 4 + length])
        image = message[4 + length :]
        assert header["format"] == "webp" and header["key"]
        assert image[:4] == b"RIFF" and image[8:12] == b"WEBP"


def test_a_display_that_dies_is_said_with_the_reason_and_the_socket_closes(
    serve: Callable[..., ViewerServer],
) -> None:
    with Display(320, 240) as doomed:
        viewer = serve(live=(doomed.name,))
        with socket_to(viewer, doomed.name) as client:
            assert json.loads(client.recv(timeout=10))["type"] == "hello"
            assert next_frame(client)["key"]
            assert doomed.pid is not None
            os.kill(doomed.pid, signal.SIGKILL)  # no goodbye: the X server is just gone
            ended = next_frame(client)
            assert ended["error"].startswith(f"display {doomed.name} died: ")
            with pytest.raises(ConnectionClosed) as closed:
                client.recv(timeout=10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1011
            assert closed.value.rcvd.reason == "the display died"
        # the server keeps serving: the dead display's feed is gone, other requests answer
        wait_until(
            lambda: not viewer.server.config.app.state.feeds.feeds(),  # type: ignore[attr-defined]
            "the dead feed to stop",
            timeout=10,
        )
        assert httpx.get(f"{viewer.url}/api/info", timeout=10).status_code == 200
