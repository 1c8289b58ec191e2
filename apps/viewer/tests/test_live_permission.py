"""The live view streams only displays the command line named: an artifact under PATH
that names a display offers a link to it, never the permission to stream it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from viewfinder.core import ScreenSize
from viewfinder.recorder import SessionMetadata
from viewfinder.viewer import ViewerServer
from viewfinder.xvfb import Display


def recording_on(folder: Path, display: str) -> None:
    """A recording (no steps) whose metadata says it was made on ``display``."""
    folder.mkdir(parents=True)
    SessionMetadata(
        screen=ScreenSize(width=64, height=48),
        backend="xvfb",
        backend_options={"display": display},
        input_source="x11",
        interval_s=0.5,
        started_at=datetime(2026, 1, 5, 10, 0, tzinfo=UTC),
        status="recording",
    ).save(folder / "metadata.json")


def refusal(viewer: ViewerServer, display: str) -> tuple[int, str]:
    url = viewer.url.replace("http://", "ws://") + f"/api/live?display={display}"
    client = connect(url, open_timeout=10, close_timeout=5)
    with client, pytest.raises(ConnectionClosed) as closed:
        client.recv(timeout=10)
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code, closed.value.rcvd.reason


@pytest.mark.parametrize("given", [(), (":4242",)])
def test_a_recording_naming_a_running_display_does_not_open_it(
    tmp_path: Path,
    display: Display,
    serve: Callable[..., ViewerServer],
    given: tuple[str, ...],
) -> None:
    recording_on(tmp_path / "theirs", display.name)
    viewer = serve(root=tmp_path, live=given)
    shown = httpx.get(f"{viewer.url}/api/artifact", params={"id": "theirs"}, timeout=30)
    assert shown.status_code == 200
    assert shown.json()["live"] == display.name  # the page offers the link...
    info = httpx.get(f"{viewer.url}/api/info", timeout=30).json()
    assert [entry["name"] for entry in info["live"]] == list(given)
    code, reason = refusal(viewer, display.name)  # ...which streams nothing
    assert code == 1008 and "give it with --live" in reason


def test_the_display_given_on_the_command_line_is_streamed(
    tmp_path: Path, display: Display, serve: Callable[..., ViewerServer]
) -> None:
    recording_on(tmp_path / "mine", display.name)
    viewer = serve(root=tmp_path, live=(display.name,))
    url = viewer.url.replace("http://", "ws://") + f"/api/live?display={display.name}"
    with connect(url, open_timeout=10, close_timeout=5) as client:
        hello = json.loads(client.recv(timeout=10))
    assert hello["type"] == "hello" and hello["display"] == display.name
