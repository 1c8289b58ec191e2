"""``viewfinder mcp --http``: streamable HTTP on loopback, with a token, driven by the MCP
SDK's client; every client its own desktop, closed when it disconnects.

One server for the module: 1001x701 desktops (a size no other test uses, to tell its
displays apart) with examples/tk_shapes.py, screenshots at full size, and a Chromium
that is not installed (``$VIEWFINDER_CHROMIUM`` names a file that does not exist).
The last test stops it with SIGTERM.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from viewfinder.core import tool_registry
from viewfinder.core.testing import running, wait_until
from viewfinder.mcp.testing import HttpServer, close_to, images_of, still_running, text_of

ROOT = Path(__file__).resolve().parents[3]
SHAPES = ROOT / "examples" / "tk_shapes.py"
TOKEN = "a-test-token-of-the-mcp-server"
BLUE, RED, GREEN = (0, 0, 255), (255, 0, 0), (0, 0xC0, 0)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    server = HttpServer(
        tmp_path_factory.mktemp("mcp-http"),
        "--size", "1001x701", "--max-size", "none", "--", sys.executable, str(SHAPES),
        token=TOKEN,
        env={"VIEWFINDER_CHROMIUM": "/nonexistent/chromium"},
        cwd=ROOT,
    )  # fmt: skip
    try:
        yield server
    finally:
        server.stop()


def displays_of(server: HttpServer) -> dict[int, str]:
    return {pid: name for pid, name in server.processes().items() if name == "Xvfb"}


def test_a_request_without_the_token_is_refused(server: HttpServer) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream"}
    without = httpx2.post(server.url, json=ping, headers=headers)
    wrong = httpx2.post(
        server.url, json=ping, headers={**headers, "Authorization": "Bearer not-the-token"}
    )
    assert without.status_code == wrong.status_code == 401
    assert "token" in without.json()["error"]["message"]


def test_the_tools_and_a_screenshot_over_http(server: HttpServer) -> None:
    connection = server.connect(TOKEN)
    try:
        # the session-less 2026 protocol is declined: a session keeps the desktop
        assert connection.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        listed = {tool.name: tool for tool in connection.list_tools().tools}
        assert set(listed) == set(tool_registry())
        assert listed["computer"].input_schema == tool_registry()["computer"].input_schema()
        result = connection.call("screenshot")
        assert not result.is_error, text_of(result)
        (image,) = images_of(result)
        assert image.size == (1001, 701)  # --max-size none: the screen as it is
        assert close_to(image.getpixel((100, 70)), BLUE)
        assert close_to(image.getpixel((280, 70)), RED)
        assert close_to(image.getpixel((190, 170)), GREEN)
    finally:
        connection.close()


def test_each_client_has_a_desktop_of_its_own_until_it_disconnects(server: HttpServer) -> None:
    first, second = server.connect(TOKEN), server.connect(TOKEN)
    try:
        one = text_of(first.call("screenshot"))
        two = text_of(second.call("screenshot"))
        assert one.split("display ")[1].split()[0] != two.split("display ")[1].split()[0]
        mine = wait_until(lambda: len(displays_of(server)) == 2 and displays_of(server), "both")
        second.close()  # the SDK client ends its session (DELETE)
        wait_until(lambda: len(still_running(mine)) == 1, "the second client's display to stop")
        assert not first.call("screenshot").is_error  # the first one's is still there
    finally:
        first.close()
    wait_until(lambda: not still_running(mine), "the first client's display to stop")


def test_a_client_that_leaves_without_a_word_loses_its_desktop_after_the_idle_timeout(
    tmp_path: Path,
) -> None:
    server = HttpServer(tmp_path, "--idle-timeout", "1", "--size", "1004x704", cwd=ROOT)
    try:
        connection = server.connect(terminate_on_close=False)
        assert not connection.call("screenshot").is_error
        displays = wait_until(lambda: displays_of(server), "the session's display")
        connection.close()  # no DELETE: the session is only left behind
        wait_until(lambda: not still_running(displays), "the idle session's display to stop")
        assert server.process.poll() is None
    finally:
        server.stop()


def test_chromium_not_installed_is_a_tool_error_and_the_next_call_works(
    server: HttpServer,
) -> None:
    connection = server.connect(TOKEN)
    try:
        result = connection.call("browser_execute", {"code": "await page.screenshot()"})
        assert result.is_error
        assert "chromium is not installed" in text_of(result)
        assert "VIEWFINDER_CHROMIUM" in text_of(result)
        after = connection.call("run_code", {"code": "print('still here')"})
        assert not after.is_error and "still here" in text_of(after)
    finally:
        connection.close()


def test_sigterm_closes_every_session_and_leaves_nothing_running(server: HttpServer) -> None:
    connection = server.connect(TOKEN)
    try:
        assert not connection.call("run_code", {"code": "print(1)"}).is_error
        started = server.processes()
        assert "Xvfb" in started.values()
        code = server.stop(signal.SIGTERM)
    finally:
        connection.close()
    assert code == 128 + signal.SIGTERM
    assert not running(server.pid)
    wait_until(lambda: not still_running(started), "what the server started to end", timeout=20)
    assert "closed 1 session(s)" in server.log()
    assert "Traceback" not in server.log()
