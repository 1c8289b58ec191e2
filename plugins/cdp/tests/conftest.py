"""Fixtures for the cdp tests: one shared headless Chromium, a loopback web server with
the test pages, and a guard that no browser the tests started outlives them."""

from __future__ import annotations

import contextlib
import http.server
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from viewfinder.cdp import CDPConnection, CDPSession, ChromiumProcess, connect, launch_chromium
from viewfinder.cdp.launcher import TEMP_PREFIX, processes_mentioning


@dataclass(frozen=True)
class Layout:
    """Where the test pages put things (tests import nothing from conftest, so they get
    this through the ``layout`` fixture)."""

    viewport: tuple[int, int] = (640, 480)
    block: tuple[int, int, int, int] = (100, 50, 200, 100)  # x, y, width, height
    block_color: tuple[int, int, int] = (0, 128, 255)
    tall_height: int = 3000
    tall_block: tuple[int, int, int, int] = (10, 2500, 100, 100)
    tall_block_color: tuple[int, int, int] = (0, 160, 0)
    button: tuple[int, int] = (80, 40)  # centre of the button on /form
    field: tuple[int, int] = (170, 115)  # centre of the text field on /form


LAYOUT = Layout()
VIEWPORT = LAYOUT.viewport

_RESET = "<style>html, body { margin: 0; background: #fff; }</style>"


def _box(box: tuple[int, int, int, int], color: tuple[int, int, int], extra: str = "") -> str:
    x, y, w, h = box
    return (
        f'<div {extra} style="position:absolute; left:{x}px; top:{y}px; width:{w}px; '
        f'height:{h}px; background:rgb{color}"></div>'
    )


PAGES = {
    "/block": f"<!doctype html>{_RESET}<body>{_box(LAYOUT.block, LAYOUT.block_color)}</body>",
    "/tall": (
        f"<!doctype html>{_RESET}<body style='height:{LAYOUT.tall_height}px'>"
        f"{_box(LAYOUT.tall_block, LAYOUT.tall_block_color)}</body>"
    ),
    "/form": f"""<!doctype html>{_RESET}
<body>
  <button id="button" style="position:absolute; left:20px; top:20px; width:120px; height:40px"
          onclick="window.clicks += 1" ondblclick="window.doubles += 1">press</button>
  <form id="form" onsubmit="event.preventDefault(); window.submitted = field.value">
    <input id="field" style="position:absolute; left:20px; top:100px; width:300px;
           height:30px">
  </form>
  <script>
    window.clicks = 0; window.doubles = 0; window.submitted = null; window.keys = [];
    document.addEventListener("keydown", (e) => window.keys.push(e.key));
  </script>
</body>""",
}


@pytest.fixture(scope="session")
def layout() -> Layout:
    return LAYOUT


# -- no browser outlives the tests ------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def no_chromium_left_behind() -> Iterator[Path]:
    """Put every temporary browser directory of this test run under one directory, and
    fail the run if any process still uses it (a browser, a helper, a crash handler)
    once the tests are done. The directory is the marker: each Chromium process we
    start carries its profile or crash-database path on its command line."""
    # Short, because Chromium's socket path under it must stay short (see launcher.py).
    base = Path(tempfile.mkdtemp(prefix="vfcdp-"))
    previous, tempfile.tempdir = tempfile.tempdir, str(base)
    try:
        yield base
    finally:
        tempfile.tempdir = previous
        # Crash handlers leave a moment after their browser; give them a generous while.
        deadline = time.monotonic() + 15
        left = list(processes_mentioning(str(base)))
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = list(processes_mentioning(str(base)))
        profiles = sorted(path.name for path in base.glob(f"{TEMP_PREFIX}*"))
        shutil.rmtree(base, ignore_errors=True)
        assert not left, f"Chromium processes started by the tests are still running: {left}"
        assert not profiles, f"temporary browser profiles were not removed: {profiles}"


# -- the shared browser and a page in it -----------------------------------------------


@pytest.fixture(scope="session")
def browser(no_chromium_left_behind: Path) -> Iterator[ChromiumProcess]:
    """One headless Chromium for every test that does not need its own."""
    with launch_chromium(width=VIEWPORT[0], height=VIEWPORT[1]) as process:
        yield process


@pytest.fixture
async def connection(browser: ChromiumProcess) -> AsyncIterator[CDPConnection]:
    async with await connect(browser.ws_url) as conn:
        yield conn


@pytest.fixture
async def page(connection: CDPConnection, site: str) -> AsyncIterator[CDPSession]:
    """A new tab showing the block page, closed after the test."""
    session = await connection.new_page(f"{site}/block", *VIEWPORT)
    try:
        yield session
    finally:
        if not connection.closed:
            await session.close()


# -- a web server on loopback ------------------------------------------------------------


class _PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGES.get(self.path.split("?", 1)[0])
        if body is None:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output quiet


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    """Base URL of a loopback HTTP server serving :data:`PAGES`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _PageHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
