"""A call returns at its timeout whatever the page or the browser does, and the next call
finds a usable page: a script loop, a hung renderer, a hung browser (ours or attached).

Renderers and browsers are hung for real, with SIGSTOP, in a Chromium of the test's own.
How far past its timeout each case returns is measured by benchmarks/browser_timeouts.py
(docs/benchmarks.md), never asserted here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.browser import BrowserSession
from viewfinder.cdp import CDPConnectError, ChromiumProcess, launch_chromium
from viewfinder.cdp.launcher import processes_mentioning
from viewfinder.cdp.testing import renderer_pids, stopped


@pytest.fixture
def own_browser(no_chromium_left_behind: Path) -> Iterator[ChromiumProcess]:
    with launch_chromium(width=320, height=240) as process:
        yield process


def test_a_hung_renderer_is_given_up_on_and_the_next_call_gets_a_new_page(
    own_browser: ChromiumProcess, site: str
) -> None:
    with BrowserSession("hung", cdp_url=own_browser.ws_url, url=f"{site}/color/blue") as session:
        first = session.execute("return session.target_id", 10)
        assert first.ok, first.output
        renderers = renderer_pids(own_browser)
        assert renderers  # the page's renderer is among them
        with stopped(renderers):
            hung = session.execute("return await page.evaluate('1 + 1')", 2)
            assert hung.error is not None and hung.error.kind == "timeout"
            assert "The page did not respond and was closed" in hung.error.message
            # a new page, in a new renderer, while the old one is still stopped
            after = session.execute("return [session.target_id, await page.evaluate('6 * 7')]", 10)
        assert after.ok, after.output
        assert after.result[0] != first.result and after.result[1] == 42


def test_a_hung_browser_of_our_own_is_killed_and_the_next_call_launches_another(
    no_chromium_left_behind: Path, site: str
) -> None:
    with BrowserSession("ours", url=f"{site}/color/blue", width=320, height=240) as session:
        assert session.execute("return 1", 20).ok
        process = session.browser.process
        assert process is not None
        with stopped([process.pid]):
            hung = session.execute("return await page.evaluate('1 + 1')", 2)
        assert hung.error is not None and hung.error.kind == "timeout"
        assert "The browser did not respond either and was killed" in hung.error.message
        after = session.execute("return await page.title()", 30)
        assert after.ok, after.output
        assert after.result == "blue page" and session.browser.launches == 2
        process.process.wait(10)  # the hung one is gone, with its whole group
        assert list(processes_mentioning(str(process.root))) == []


def test_a_hung_attached_browser_is_let_go_of_and_reconnected_once_it_answers(
    own_browser: ChromiumProcess, site: str
) -> None:
    with BrowserSession("theirs", cdp_url=own_browser.ws_url, url=f"{site}/color/red") as session:
        assert session.execute("return 1", 10).ok
        with stopped([own_browser.pid]):
            hung = session.execute("return await page.evaluate('1')", 2)
            assert hung.error is not None and hung.error.kind == "timeout"
            assert "the next call connects to it again" in hung.error.message
            # still hung: connecting fails within the call's time, with the URL named
            with pytest.raises(CDPConnectError, match=r"127\.0\.0\.1"):
                session.execute("return 1", 2)
        assert own_browser.running  # an attached browser is never killed
        after = session.execute("return await page.evaluate('6 * 7')", 10)
        assert after.ok and after.result == 42


def test_a_script_loop_is_terminated_and_the_page_kept(
    own_browser: ChromiumProcess, site: str
) -> None:
    with BrowserSession("loop", cdp_url=own_browser.ws_url, url=f"{site}/color/blue") as session:
        first = session.execute(
            "state['target'] = session.target_id\nawait page.evaluate('window.kept = 1')", 10
        )
        assert first.ok, first.output
        looped = session.execute("await page.evaluate('while (true) {}')", 2)
        assert looped.error is not None and looped.error.kind == "timeout"
        assert "The page's running script was terminated; the page was kept." in looped.output
        after = session.execute(
            "return [session.target_id == state['target'], await page.evaluate('window.kept')]", 10
        )
        assert after.result == [True, 1]
