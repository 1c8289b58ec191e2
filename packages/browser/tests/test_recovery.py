"""Recovering from a browser that dies mid-call, and from a capture that hangs."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from viewfinder.browser import Browser, BrowserSession, SnippetSession
from viewfinder.browser.view import CAPTURE_METHOD
from viewfinder.cdp import CDPSession, CDPTimeoutError
from viewfinder.core import Screenshot


def test_chromium_killed_mid_call_gives_a_clear_error_and_the_next_call_relaunches(
    site: str, layout: Any, no_chromium_left_behind: Path
) -> None:
    browser = Browser(width=layout.viewport[0], height=layout.viewport[1])
    session = BrowserSession("crash", browser=browser, url=f"{site}/color/blue")
    try:
        assert session.execute("return await page.title()").result == "blue page"
        assert browser.process is not None
        doomed = browser.process
        waiting = threading.Event()
        session.state["waiting"] = waiting
        outcome: dict[str, Any] = {}

        def run() -> None:
            outcome["result"] = session.execute(
                """
state["waiting"].set()
await session.call(
    "Runtime.evaluate",
    {"expression": "new Promise(() => {})", "awaitPromise": True},
)
""",
                timeout=60,
            )

        caller = threading.Thread(target=run)
        caller.start()
        assert waiting.wait(30)
        os.killpg(doomed.pid, signal.SIGKILL)
        caller.join(60)
        assert not caller.is_alive()

        result = outcome["result"]
        assert result.error is not None
        assert result.error.kind == "browser"
        assert "the browser went away during the call" in result.error.message
        assert "CDPConnectionClosedError" in result.output
        assert "line 3, in <snippet>\n    await session.call(" in result.output

        after = session.execute("""
await page.screenshot()
return await page.title()
""")
        assert after.ok, after.output
        assert after.result == "blue page"
        assert after.screenshots[0].pixel(*layout.inside_block()) == layout.colors["blue"]
        assert browser.launches == 2
        assert browser.process is not doomed and browser.process.running
    finally:
        session.close()
        browser.stop()
    assert not browser.process


# -- a capture that hangs is retried once, after a nudge --------------------------------


class FirstCaptureHangs(SnippetSession):
    """A view whose first ``Page.captureScreenshot`` never answers (as on an idle
    compositor); everything else, the retry included, goes to the real page."""

    hangs = 1

    async def _send(
        self, method: str, params: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        if method == CAPTURE_METHOD and self.hangs:
            self.hangs -= 1
            await asyncio.sleep(timeout)
            raise CDPTimeoutError(method, timeout, method=method)
        return await super()._send(method, params, timeout)


async def test_a_hanging_capture_is_retried_once_after_nudging_the_page(
    page: CDPSession, layout: Any
) -> None:
    view = FirstCaptureHangs(page, call_id="retry", deadline=time.monotonic() + 8)
    sent: list[str] = []
    view.on_call_result(lambda method, params, result: sent.append(method))
    try:
        result = await view.call(CAPTURE_METHOD, {"format": "png"})
    finally:
        view.close_view("test over")
        view.release()
    assert sent[:2] == ["Page.bringToFront", "Page.startScreencast"]
    assert sent[-2:] == ["Page.stopScreencast", CAPTURE_METHOD]
    assert sent.count(CAPTURE_METHOD) == 1
    shot = Screenshot.from_bytes(base64.b64decode(result["data"]), source="cdp")
    assert shot.pixel(*layout.inside_block()) == layout.colors["blue"]


async def test_a_capture_that_hangs_twice_fails_within_the_calls_time(page: CDPSession) -> None:
    view = FirstCaptureHangs(page, call_id="retry", deadline=time.monotonic() + 2)
    view.hangs = 2
    try:
        with pytest.raises(CDPTimeoutError, match="retried once after nudging the page"):
            await view.call(CAPTURE_METHOD, {"format": "png"})
    finally:
        view.close_view("test over")
        view.release()
