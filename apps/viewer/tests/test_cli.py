"""``viewfinder view``: the command, its process, and the token beyond loopback."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from viewfinder.cli.app import build_app
from viewfinder.core.testing import processes_with_argument, wait_until
from viewfinder.viewer import ViewerServer, ViewerSettings
from viewfinder.viewer.errors import ViewerSettingsError
from viewfinder.xvfb import Display

TOKEN = "a-long-enough-token"


def test_view_serves_path_until_sigterm_and_leaves_nothing(tmp_path: Path) -> None:
    root = tmp_path / "nothing-yet"
    root.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "viewfinder.cli", "view", str(root), "--no-open", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith(f"viewing {root} on http://127.0.0.1:"), first
        url = first.split(" on ", 1)[1].split()[0]

        def answers() -> bool:
            try:
                return httpx.get(f"{url}api/info", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(answers, "the viewer to answer", timeout=60)
        info = httpx.get(f"{url}api/info").json()
        assert info["top"] == {"kind": "list", "items": []}
        page = httpx.get(url)
        assert page.status_code == 200 and '<script type="module"' in page.text
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
    assert processes_with_argument(str(root)) == set()


def said(output: str) -> str:
    """What a command printed, without the boxes and line breaks of its error panel."""
    return " ".join(output.replace("│", " ").split())


def test_bad_command_lines_say_what_is_wrong(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(build_app(), ["view", str(tmp_path / "gone"), "--no-open"])
    assert missing.exit_code == 2 and "does not exist" in said(missing.output)
    nothing = runner.invoke(build_app(), ["view", "--no-open"])
    assert nothing.exit_code == 2
    assert "give a PATH to show, or --live :N" in said(nothing.output)
    listed = runner.invoke(build_app(), ["--help"])
    assert "view" in listed.output and "watch a display live" in said(listed.output)


@pytest.mark.parametrize("name", ["foo", "localhost:1", ":1x"])
def test_a_live_name_that_is_no_local_display_is_one_line_before_serving(name: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", "view", "--live", name, "--no-open",
         "--port", "0"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""  # nothing was served, so no address was printed
    assert result.stderr.splitlines() == [
        f"error: --live {name!r} is not a local X display: write it as :N (e.g. :1); the "
        "live view shows displays of this machine only"
    ]
    with pytest.raises(ViewerSettingsError, match="not a local X display"):
        ViewerSettings(live=(name,))


def test_beyond_loopback_needs_a_token() -> None:
    with pytest.raises(ViewerSettingsError, match="give a token"):
        ViewerSettings(root=Path("."), host="0.0.0.0")
    with pytest.raises(ViewerSettingsError, match="at least 8"):
        ViewerSettings(root=Path("."), token="short")


def test_the_token_goes_as_a_header_or_a_websocket_subprotocol_never_a_cookie(
    tmp_path: Path, display: Display, serve: Callable[..., ViewerServer]
) -> None:
    viewer = serve(root=tmp_path, live=(display.name,), token=TOKEN)
    refused = httpx.get(f"{viewer.url}/api/info")
    assert refused.status_code == 401 and "#token=" in refused.json()["detail"]
    # the page's shell holds no data: served without the token, and sets no cookie
    for address in (f"{viewer.url}/?live=:1", f"{viewer.url}/?token={TOKEN}"):
        shell = httpx.get(address)
        assert shell.status_code == 200 and "set-cookie" not in shell.headers
    bearer = httpx.get(f"{viewer.url}/api/info", headers={"Authorization": f"Bearer {TOKEN}"})
    assert bearer.status_code == 200
    socket = viewer.url.replace("http://", "ws://") + f"/api/live?display={display.name}"
    with pytest.raises(InvalidStatus) as denied:
        connect(socket, open_timeout=10)
    assert denied.value.response.status_code == 401
    encoded = base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("=")
    offered = f"viewfinder-token.{encoded}"
    with connect(socket, subprotocols=[offered], open_timeout=10) as client:  # type: ignore[list-item]
        assert client.subprotocol == offered
        assert json.loads(client.recv(timeout=10))["type"] == "hello"
