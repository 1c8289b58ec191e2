"""The viewer's token reaches no other port of the host, in a real Chromium.

``viewfinder view --token-file`` prints the address to open. Opened in Chromium, the
page shows its frames and its live view (the token sent as a header and a WebSocket
subprotocol), and then a request of that browser to a server on another port of the
same host carries nothing of the token: a cookie would (a cookie ignores ports).
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from viewfinder.core.testing import wait_until
from viewfinder.xvfb import Display

from .test_confinement import write_session

TOKEN = "a-token-no-other-port-may-see"


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:
        _Recorder.seen.append(str(self.headers))
        body = b"<html><body>another server</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def other_port() -> Iterator[int]:
    """A server on another port of 127.0.0.1 that keeps the headers of each request."""
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def printed(tmp_path: Path, display: Display) -> Iterator[str]:
    """The address ``viewfinder view SESSION --live :N --token-file F`` prints."""
    session = tmp_path / "session"
    write_session(session, ["screenshots/0.png", "screenshots/1.png"])
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "viewfinder.cli", "view", str(session), "--no-open",
         "--port", "0", "--live", display.name, "--token-file", str(token_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert " on http://127.0.0.1:" in first, first
        yield first.split(" on ", 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_the_token_opens_the_page_and_reaches_no_other_port(
    printed: str, other_port: int, page: Any, display: Display
) -> None:
    base = printed.split("#", 1)[0].split("?", 1)[0].rstrip("/")

    def answers() -> bool:
        try:
            page.goto(printed)
        except Exception:  # the server is still starting
            return False
        return True

    wait_until(answers, "the viewer to answer", timeout=60)
    page.wait_for_selector("body[data-ready='true']")
    # the page works: its frame came through with the token sent as a header
    page.wait_for_function("document.getElementById('frame')?.naturalWidth === 64")
    assert TOKEN not in page.url  # out of the address bar and the history
    # and so does its live view, over a WebSocket that carries it as a subprotocol
    page.goto(f"{base}/?live={display.name}")
    page.wait_for_function("window.viewfinderLive && window.viewfinderLive.frames > 0")

    page.goto(f"http://127.0.0.1:{other_port}/")
    page.wait_for_selector("text=another server")
    assert _Recorder.seen, "the other server got no request"
    assert not [headers for headers in _Recorder.seen if TOKEN in headers], _Recorder.seen
    assert not [c for c in page.context.cookies() if TOKEN in c["value"]]
