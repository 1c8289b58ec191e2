"""The attacks of a web page on every web surface, through a real Chromium.

- DNS rebinding: Chromium resolves ``rebind.test`` to 127.0.0.1
  (``--host-resolver-rules``), opens ``http://rebind.test:PORT/`` and reads the app
  from a script that is, for the browser, of the same origin;
- cross-site WebSocket hijacking: a page served from another loopback port opens
  ``ws://127.0.0.1:PORT/...`` (the live view with ``--control``, ``/ws``);
- cross-site state changes: the same page POSTs ``text/plain`` (no preflight) to the
  app; on a desktop server, ``openenv/session/create`` through ``/mcp``.

Every one is refused; the rules themselves are in test_web_surfaces.py.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.web_surfaces import (  # fixtures are used by name
    Surface,
    display,
    surface,
)
from viewfinder.cdp.testing import serve_pages

__all__ = ["display", "surface"]

CHROMIUM = "/usr/bin/chromium"
REBIND = "rebind.test"

#: A page of another origin: opens a WebSocket to ``TARGET`` and says what happened.
HIJACK = """<!doctype html><title>attacker</title><script>
window.result = new Promise((resolve) => {
  const events = [];
  const ws = new WebSocket(TARGET);
  ws.onopen = () => {
    events.push("open");
    ws.send(JSON.stringify({kind: "type", text: "pwned"}));
  };
  ws.onmessage = (e) =>
    events.push(typeof e.data === "string" ? "text:" + e.data.slice(0, 80) : "binary");
  ws.onerror = () => events.push("error");
  ws.onclose = (e) => { events.push("close:" + e.code); resolve(events); };
  setTimeout(() => ws.close(), 4000);
});
</script>"""
#: A page of another origin: a POST without a preflight, whose answer it cannot read.
FORGE = """<!doctype html><title>attacker</title><script>
window.result = fetch(TARGET, {method: "POST", mode: "no-cors",
  headers: {"Content-Type": "text/plain"}, body: BODY}).then(() => "sent", (e) => String(e));
</script>"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium that resolves rebind.test to 127.0.0.1."""
    from playwright.sync_api import sync_playwright

    flags = ["--no-sandbox", "--disable-gpu", "--headless"]
    rebinding = f"--host-resolver-rules=MAP {REBIND} 127.0.0.1"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=[*flags, rebinding])
        with contextlib.closing(chromium):
            yield chromium


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page in a context of its own: no cookie or cache from another test."""
    with contextlib.closing(browser.new_context()) as context:
        opened = context.new_page()
        opened.set_default_timeout(20000)
        yield opened


def test_a_rebound_name_reads_nothing(surface: Surface, page: Any) -> None:
    """The page loads from http://rebind.test:PORT/ (the attacker's name, now 127.0.0.1);
    its own script then asks the app what it serves."""
    opened = page.goto(f"http://{REBIND}:{surface.port}{surface.page}")
    assert opened is not None and opened.status == 421
    read = surface.read
    answer = page.evaluate(
        """async ([path, method, body, headers]) => {
            const init = {method, headers: {...headers}};
            if (body !== null) {
                init.body = body;
                init.headers["Content-Type"] = "application/json";
            }
            const response = await fetch(path, init);
            return [response.status, await response.text()];
        }""",
        [read.path, read.method, json.dumps(read.body) if read.body is not None else None,
         read.headers],
    )  # fmt: skip
    assert answer[0] == 421, answer
    assert "secret" not in answer[1] and "healthy" not in answer[1]


def test_a_page_of_another_origin_cannot_open_the_sockets(surface: Surface, page: Any) -> None:
    """Cross-site WebSocket hijacking of the live view (with --control) and of /ws."""
    targets = surface.sockets or (surface.page,)  # mcp --http has none: any path is refused
    for path in targets:
        target = f"ws://127.0.0.1:{surface.port}{path}"
        pages = {"/": HIJACK.replace("TARGET", json.dumps(target))}
        with serve_pages(pages) as attacker:
            assert attacker != surface.origin
            page.goto(attacker + "/")
            events = page.evaluate("window.result")
        assert "open" not in events and not any(e.startswith("text:") for e in events), events
        assert events[-1] == "close:1006", events  # the handshake failed


def test_a_page_of_another_origin_changes_nothing(surface: Surface, page: Any) -> None:
    """A text/plain POST (no preflight) from another origin: the guard answers 403 (what
    the network saw; the page cannot read it), and a desktop server opens no session."""
    if surface.name == "serve-desktop":
        call_path = "/mcp"
        body = {"jsonrpc": "2.0", "id": 7, "method": "openenv/session/create", "params": {}}
    else:
        call_path, body = surface.change.path, surface.change.body
    target = f"http://127.0.0.1:{surface.port}{call_path}"
    html = FORGE.replace("TARGET", json.dumps(target)).replace("BODY", json.dumps(json.dumps(body)))
    statuses: list[int] = []
    page.on(
        "response",
        lambda response: statuses.append(response.status) if response.url == target else None,
    )
    with serve_pages({"/": html}) as attacker:
        page.goto(attacker + "/")
        assert page.evaluate("window.result") == "sent"
    for _ in range(100):  # the response event comes on Playwright's connection
        if statuses:
            break
        page.wait_for_timeout(100)
    assert statuses == [403], statuses
    if surface.name.startswith("serve"):
        health = httpx.get(f"{surface.base}/health", timeout=30).json()
        assert health["active_sessions"] == 0, health
