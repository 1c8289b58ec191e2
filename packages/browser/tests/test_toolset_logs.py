"""What a page logged and fetched, read by ``read_console`` and ``read_network`` once
each: an entry is said once, a request still waiting is said again with its answer, and
one whose page was left ends with the page."""

from __future__ import annotations

import contextlib
import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from viewfinder.browser.toolset import BrowserToolset

sys.path.insert(0, str(Path(__file__).parent))
import test_toolset_members as members
from test_toolset_members import ok

# the members' fixtures: a Chromium of this module's own on the test site
site, shared, browser = members.site, members.shared, members.browser


@contextlib.contextmanager
def hanging_server() -> Iterator[str]:
    """A loopback server whose every answer waits until the block ends (at most 20 s)."""
    done = threading.Event()

    class Hang(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            done.wait(20)
            with contextlib.suppress(OSError):  # the browser may have given up
                self.send_error(504)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hang)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        done.set()
        server.shutdown()
        server.server_close()


def _read_until(browser: BrowserToolset, member: str, wanted: str) -> str:
    """What ``member`` read, read again (up to 5 s) until ``wanted`` is in it."""
    seen = ""
    for _ in range(50):
        seen += ok(browser, member) + "\n"
        if wanted in seen:
            break
        ok(browser, "wait", duration=0.1)
    return seen


def test_console_and_network_entries_are_read_once(browser: BrowserToolset, site: str) -> None:
    ok(browser, "navigate", url="reload")
    console = _read_until(browser, "read_console", "data {")
    assert '[log] data {"ok": true}' in console
    network = _read_until(browser, "read_network", "/missing 404").splitlines()
    assert any(line.startswith(f"GET {site}/data.json 200 ") for line in network)
    assert any(line.startswith(f"GET {site}/missing 404 ") for line in network)
    console += _read_until(browser, "read_console", "404")
    assert "Failed to load resource" in console and "404" in console
    ok(browser, "javascript_exec", text="console.error('boom', 42); 1")
    assert ok(browser, "read_console") == "[error] boom 42"
    assert ok(browser, "read_console").startswith("(no console entries")
    ok(browser, "javascript_exec", text="fetch('/two').then(r => r.text())")
    again = _read_until(browser, "read_network", "/two 200").splitlines()
    assert any(line.startswith(f"GET {site}/two 200 text/html") for line in again)
    assert ok(browser, "read_network").startswith("(no requests")


def test_a_request_whose_page_was_left_is_not_pending_for_ever(
    browser: BrowserToolset, site: str
) -> None:
    with hanging_server() as slow:
        ok(browser, "javascript_exec", text=f"fetch('{slow}/hang').catch(() => 0); 1")
        assert f"GET {slow}/hang pending" in _read_until(browser, "read_network", "/hang")
        ok(browser, "navigate", url=site + "/two")
        ended = _read_until(browser, "read_network", "/hang failed")
        assert f"GET {slow}/hang failed (" in ended
        assert "/hang" not in ok(browser, "read_network")
