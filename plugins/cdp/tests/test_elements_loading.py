"""A page read while its document is still loading: what is parsed so far is listed, and
the read's reason says the rest is not there yet; once the document has loaded, the
reason is empty and the rest is listed."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator

import pytest

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.launcher import ChromiumProcess
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import ElementTree

HEAD = b"<!doctype html><title>Half</title><body><button>First</button>" + b" " * 2048
TAIL = b"<button>Second</button></body>"
#: The longest the server holds the rest of the document back (the test lets it go).
HOLD_S = 30.0


@pytest.fixture
def slow_page() -> Iterator[tuple[str, threading.Event]]:
    """A page whose server sends its first button, then holds the rest back until the
    event is set (at most HOLD_S)."""
    release = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(HEAD) + len(TAIL)))
            self.end_headers()
            self.wfile.write(HEAD)
            self.wfile.flush()
            release.wait(HOLD_S)
            self.wfile.write(TAIL)

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/slow", release
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def _read_until(source: CdpElementSource, check: object, what: str) -> ElementTree:
    deadline = time.monotonic() + 15
    while True:
        tree = source.read()
        if check(tree):  # type: ignore[operator]
            return tree
        assert time.monotonic() < deadline, f"{what}: {tree.reason!r}"
        time.sleep(0.05)


def _buttons(tree: ElementTree) -> list[str]:
    return [e.name for e in tree.walk() if e.role == "button"]


def test_a_document_still_loading_is_read_so_far_and_says_so(
    browser: ChromiumProcess, slow_page: tuple[str, threading.Event]
) -> None:
    url, release = slow_page
    with (
        serve_pages({"/": "<!doctype html><title>Start</title>"}) as start,
        CdpElementSource(url=start + "/", cdp_url=browser.ws_url, width=640, height=480) as source,
    ):
        assert source.read().reason == ""
        session = source.backend.session
        source.backend.run(session.evaluate(f"location.href = {url!r}"))
        half = _read_until(source, lambda t: "First" in _buttons(t), "the first button")
        assert _buttons(half) == ["First"]
        assert "still loading" in half.reason and "/slow" in half.reason, half.reason
        release.set()
        whole = _read_until(source, lambda t: "Second" in _buttons(t), "the rest")
        whole = _read_until(source, lambda t: t.reason == "", "the loaded document")
        assert _buttons(whole) == ["First", "Second"]
