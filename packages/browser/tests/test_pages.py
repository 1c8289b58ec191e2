"""A page that lasts between CLI calls, and switching to popups and other pages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from viewfinder.browser import BrowserSession
from viewfinder.browser.pages import pick_page, remember_page, remembered_page
from viewfinder.cdp import ChromiumProcess, launch_chromium

_POPUP_OPENER = """
await page.evaluate('''(() => {
  const button = document.createElement("button");
  button.textContent = "open";
  button.style.cssText = "position:absolute; left:0; top:0; width:100px; height:40px";
  button.onclick = () => window.open(location.origin + "/color/red", "pop",
                                     "width=300,height=200");
  document.body.appendChild(button);
})()''')
await page.click(x=50, y=20)
"""


def _exec(cdp_url: str, code: str, *extra: str, state: Path) -> dict[str, Any]:
    """``viewfinder browser exec --json`` as its own process."""
    done = subprocess.run(
        [sys.executable, "-m", "viewfinder.cli", "browser", "exec", code, "--json",
         "--cdp-url", cdp_url, "--width", "320", "--height", "240", *extra],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "XDG_STATE_HOME": str(state)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture
def own_browser(no_chromium_left_behind: Path) -> Any:
    """A browser of this test alone: its pages are what the test made."""
    with launch_chromium(width=320, height=240) as process:
        yield process


def test_exec_calls_continue_on_the_page_the_previous_one_left(
    own_browser: ChromiumProcess, site: str, tmp_path: Path
) -> None:
    first = _exec(
        own_browser.http_url,
        "await page.type('typed by the first call', selector='#field')\n"
        "await page.evaluate('window.marker = 42')\n"
        "return session.target_id",
        "--url", f"{site}/form",
        state=tmp_path,
    )  # fmt: skip
    second = _exec(
        own_browser.http_url,
        "return [session.target_id, await page.url(), await page.evaluate('window.marker'),"
        " await page.evaluate('document.querySelector(\"#field\").value')]",
        state=tmp_path,
    )
    assert second["result"] == [first["result"], f"{site}/form", 42, "typed by the first call"]

    # --new-page works in a window of its own and closes it: the kept page is untouched
    fresh = _exec(
        own_browser.http_url,
        "return [session.target_id, await page.url()]",
        "--new-page",
        state=tmp_path,
    )
    assert fresh["result"][0] != first["result"] and fresh["result"][1] == "about:blank"
    third = _exec(own_browser.http_url, "return session.target_id", state=tmp_path)
    assert third["result"] == first["result"]


def test_a_closed_kept_page_is_replaced_by_another(
    own_browser: ChromiumProcess, site: str, tmp_path: Path
) -> None:
    first = _exec(
        own_browser.http_url,
        "return session.target_id",
        "--url", f"{site}/color/blue",
        state=tmp_path,
    )  # fmt: skip
    closed = _exec(
        own_browser.http_url,
        f"await session.connection.call('Target.closeTarget', {{'targetId': {first['result']!r}}})",
        "--new-page",
        state=tmp_path,
    )
    assert closed["error"] is None
    after = _exec(own_browser.http_url, "return session.target_id", state=tmp_path)
    assert after["error"] is None and after["result"] != first["result"]


def test_exec_switches_to_a_popup_and_stays_there(
    own_browser: ChromiumProcess, site: str, tmp_path: Path, layout: Any
) -> None:
    opened = _exec(
        own_browser.http_url,
        _POPUP_OPENER
        + "for _ in range(100):\n"
        "    if [p for p in await page.pages() if p['opener']]:\n"
        "        break\n"
        "    await asyncio.sleep(0.05)\n"
        "opener = session.target_id\n"
        "await page.switch_to()\n"
        "await page.wait_for('document.readyState === \"complete\"')\n"
        "await page.screenshot()\n"
        "return [opener, page.session.target_id, await page.title()]",
        "--url", f"{site}/color/blue",
        state=tmp_path,
    )  # fmt: skip
    opener, popup, title = opened["result"]
    assert popup != opener and title == "red page"
    assert len(opened["screenshots"]) == 1
    # the next call starts on the popup, where the last one left off
    after = _exec(own_browser.http_url, "return [session.target_id, await page.title()]",
                  state=tmp_path)  # fmt: skip
    assert after["result"] == [popup, "red page"]
    # and can go back by the opener's URL
    back = _exec(
        own_browser.http_url,
        "await page.switch_to('/color/blue')\nreturn [page.session.target_id, await page.title()]",
        state=tmp_path,
    )
    assert back["result"] == [opener, "blue page"]


def test_a_session_switches_to_a_popup_and_captures_it(
    open_session: Callable[..., BrowserSession], site: str, layout: Any
) -> None:
    session = open_session("popups", url=f"{site}/color/blue")
    result = session.execute(
        _POPUP_OPENER + "for _ in range(100):\n"
        "    if [p for p in await page.pages() if p['opener'] == session.target_id]:\n"
        "        break\n"
        "    await asyncio.sleep(0.05)\n"
        "await page.switch_to()\n"
        "await page.wait_for('document.readyState === \"complete\"')\n"
        "shot = await page.screenshot()\n"
        "return [p['title'] for p in await page.pages() if p['current']]",
        20,
    )
    assert result.ok, result.output
    assert result.result == ["red page"]
    (shot,) = result.screenshots
    assert shot.size == layout.viewport  # the popup gets the session's viewport
    assert shot.pixel(*layout.inside_block()) == layout.colors["red"]
    # the next call is on the popup too; closing the session closes both windows
    assert session.execute("return await page.title()", 10).result == "red page"


def test_switching_to_a_page_that_is_not_there_lists_the_pages(
    open_session: Callable[..., BrowserSession], site: str
) -> None:
    session = open_session("no-popup", url=f"{site}/color/green")
    result = session.execute("await page.switch_to()", 10)
    assert result.error is not None and result.error.type == "PageNotFoundError"
    assert "no page matches a page opened by the current one" in result.error.message
    assert f"{site}/color/green" in result.error.message
    named = session.execute("await page.switch_to('no-such-page')", 10)
    assert named.error is not None and "'no-such-page'" in named.error.message
    assert session.execute("return await page.title()", 10).result == "green page"


def test_page_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert remembered_page("ws://127.0.0.1:1/devtools/browser/a") is None
    remember_page("ws://127.0.0.1:1/devtools/browser/a", "T1")
    remember_page("ws://127.0.0.1:1/devtools/browser/b", "T2")
    assert remembered_page("ws://127.0.0.1:1/devtools/browser/a") == "T1"
    assert remembered_page("ws://127.0.0.1:1/devtools/browser/b") == "T2"
    folder = tmp_path / "viewfinder" / "browser-pages"
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    for record in folder.iterdir():
        record.write_text("{not json")  # a damaged record is no record
    assert remembered_page("ws://127.0.0.1:1/devtools/browser/a") is None

    pages = [
        {"targetId": "X", "type": "page", "url": "devtools://devtools/inspector.html"},
        {"targetId": "W", "type": "service_worker", "url": "http://a/sw.js"},
        {"targetId": "P1", "type": "page", "url": "http://a/"},
        {"targetId": "P2", "type": "page", "url": "http://b/"},
    ]
    assert pick_page(pages, "P2") == "P2"
    assert pick_page(pages, "gone") == "P1"
    assert pick_page(pages[:2], None) is None


def test_a_record_that_cannot_be_written_does_not_fail_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # a file where a folder must go
    remember_page("ws://127.0.0.1:1/devtools/browser/a", "T1")
    assert "could not record the browser's current page" in caplog.text
    assert remembered_page("ws://127.0.0.1:1/devtools/browser/a") is None
