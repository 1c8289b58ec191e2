"""The CDP connection against a real Chromium: connecting, calls, errors, listeners."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import Any

import pytest

from viewfinder.cdp import (
    CDPConnectError,
    CDPConnection,
    CDPConnectionClosedError,
    CDPError,
    CDPSession,
    CDPTimeoutError,
    ChromiumProcess,
    connect,
    launch_chromium,
    resolve_cdp_url,
)
from viewfinder.core import ViewfinderError

NEVER = "new Promise(() => {})"

# -- connecting -----------------------------------------------------------------------


async def test_connect_by_websocket_url(browser: ChromiumProcess) -> None:
    async with await connect(browser.ws_url) as connection:
        version = await connection.call("Browser.getVersion")
    assert version["product"].startswith(("Chrome/", "HeadlessChrome/"))
    assert connection.closed


async def test_connect_by_http_address(browser: ChromiumProcess) -> None:
    async with await connect(browser.http_url) as connection:
        assert connection.url == browser.ws_url
        assert "product" in await connection.call("Browser.getVersion")


async def test_connect_by_bare_host_and_port(browser: ChromiumProcess) -> None:
    async with await connect(f"127.0.0.1:{browser.port}") as connection:
        assert "product" in await connection.call("Browser.getVersion")


async def test_connect_uses_the_environment_variable(
    browser: ChromiumProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIEWFINDER_CDP_URL", browser.http_url)
    async with await connect() as connection:
        assert "product" in await connection.call("Browser.getVersion")


@pytest.mark.parametrize("scheme", ["http", "ws"])
async def test_an_unreachable_url_says_what_was_tried_and_what_to_do(
    scheme: str, free_port: int
) -> None:
    url = f"{scheme}://127.0.0.1:{free_port}" + ("/devtools/browser/x" if scheme == "ws" else "")
    with pytest.raises(CDPConnectError) as caught:
        await connect(url, timeout=5)
    message = str(caught.value)
    assert f"127.0.0.1:{free_port}" in message
    assert "viewfinder browser launch" in message
    assert "--remote-debugging-port=9222" in message
    assert isinstance(caught.value, ViewfinderError)


async def test_a_web_server_that_is_not_cdp_is_refused(site: str) -> None:
    with pytest.raises(CDPConnectError, match="not a CDP endpoint"):
        await connect(site, timeout=5)


async def test_no_url_at_all_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIEWFINDER_CDP_URL", raising=False)
    with pytest.raises(CDPConnectError, match="VIEWFINDER_CDP_URL"):
        await connect()


def test_resolve_cdp_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIEWFINDER_CDP_URL", raising=False)
    assert resolve_cdp_url() is None
    assert resolve_cdp_url("localhost:9222") == "http://localhost:9222"
    monkeypatch.setenv("VIEWFINDER_CDP_URL", "ws://127.0.0.1:1/devtools/browser/x")
    assert resolve_cdp_url() == "ws://127.0.0.1:1/devtools/browser/x"
    assert resolve_cdp_url("http://h:2") == "http://h:2"


# -- calls ------------------------------------------------------------------------------


async def test_an_unknown_method_is_a_cdp_error(connection: CDPConnection) -> None:
    with pytest.raises(CDPError) as caught:
        await connection.call("Nonsense.doesNotExist")
    error = caught.value
    assert error.method == "Nonsense.doesNotExist"
    assert error.code == -32601
    assert "wasn't found" in error.message
    # The connection is fine afterwards.
    assert "product" in await connection.call("Browser.getVersion")


async def test_a_call_that_never_answers_times_out(page: CDPSession) -> None:
    with pytest.raises(CDPTimeoutError) as caught:
        await page.call(
            "Runtime.evaluate", {"expression": NEVER, "awaitPromise": True}, timeout=0.5
        )
    assert caught.value.method == "Runtime.evaluate"
    assert isinstance(caught.value, TimeoutError)
    assert await page.evaluate("6 * 7") == 42


async def test_waiting_for_an_event_that_never_comes_times_out(page: CDPSession) -> None:
    with pytest.raises(CDPTimeoutError):
        await page.wait_for_event("Page.javascriptDialogOpening", timeout=0.3)


async def test_a_killed_browser_fails_pending_and_later_calls(site: str) -> None:
    with launch_chromium(width=320, height=240) as doomed:
        connection = await connect(doomed.ws_url)
        session = await connection.new_page(f"{site}/block", 320, 240)
        waiter = session.expect_event("Page.javascriptDialogOpening")
        # A generous timeout: failing with CDPTimeoutError would mean the close was missed.
        pending = asyncio.ensure_future(
            session.call(
                "Runtime.evaluate", {"expression": NEVER, "awaitPromise": True}, timeout=300
            )
        )
        await asyncio.sleep(0)  # let the call go out
        os.killpg(doomed.pid, signal.SIGKILL)
        with pytest.raises(CDPConnectionClosedError):
            await pending
        with pytest.raises(CDPConnectionClosedError):
            await waiter
        with pytest.raises(CDPConnectionClosedError):
            await connection.call("Browser.getVersion", timeout=300)
        assert connection.closed
        await session.close()  # nothing to do once the browser is gone
        await connection.close()


# -- listeners ------------------------------------------------------------------------


async def test_browser_event_listeners_fire_and_unsubscribe(
    connection: CDPConnection,
) -> None:
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    handle = connection.on("Target.targetCreated", first.append)
    connection.on("Target.targetCreated", second.append)
    discovered = connection.expect_event("Target.targetCreated")
    # Discovery reports the existing targets (at least the browser's) straight away.
    await connection.call("Target.setDiscoverTargets", {"discover": True})
    await asyncio.wait_for(discovered, 10)
    assert first
    handle()
    assert not handle.active
    handle.remove()  # twice is harmless
    seen = len(first)
    created = connection.expect_event(
        "Target.targetCreated", lambda params: params["targetInfo"]["url"] == "about:blank#new"
    )
    target = await connection.call("Target.createTarget", {"url": "about:blank#new"})
    await asyncio.wait_for(created, 10)
    assert any(p["targetInfo"]["targetId"] == target["targetId"] for p in second)
    assert len(first) == seen
    await connection.call("Target.closeTarget", {"targetId": target["targetId"]})
    await connection.call("Target.setDiscoverTargets", {"discover": False})


async def test_session_listeners_sync_and_async_and_a_raising_one_is_logged(
    page: CDPSession, site: str, caplog: pytest.LogCaptureFixture
) -> None:
    sync_seen: list[str] = []
    async_seen: list[str] = []

    def broken(params: dict[str, Any]) -> None:
        raise RuntimeError("listener bug")

    async def record(params: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        async_seen.append(params["name"])

    page.on("Page.lifecycleEvent", broken)
    page.on("Page.lifecycleEvent", lambda params: sync_seen.append(params["name"]))
    page.on("Page.lifecycleEvent", record)
    with caplog.at_level(logging.ERROR):
        await page.navigate(f"{site}/block")
    assert "load" in sync_seen
    for _ in range(500):  # async listeners run as tasks, after dispatch
        if "load" in async_seen:
            break
        await asyncio.sleep(0.01)
    assert "load" in async_seen
    assert "listener bug" in caplog.text
    assert await page.evaluate("document.readyState") == "complete"


async def test_call_result_listeners_see_successful_calls_only(page: CDPSession) -> None:
    seen: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    handle = page.on_call_result(lambda *call: seen.append(call))
    assert await page.evaluate("1 + 2") == 3
    with pytest.raises(CDPError):
        await page.call("Nonsense.doesNotExist")
    with pytest.raises(CDPTimeoutError):
        await page.call(
            "Runtime.evaluate", {"expression": NEVER, "awaitPromise": True}, timeout=0.3
        )
    assert [method for method, _, _ in seen] == ["Runtime.evaluate"]
    _, params, result = seen[0]
    assert params["expression"] == "1 + 2"
    assert result["result"]["value"] == 3
    handle.remove()
    await page.evaluate("4")
    assert len(seen) == 1


async def test_async_call_result_listeners_are_awaited_before_the_call_returns(
    connection: CDPConnection,
) -> None:
    seen: list[str] = []

    async def record(method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        seen.append(method)

    def broken(method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
        raise RuntimeError("listener bug")

    connection.on_call_result(broken)
    connection.on_call_result(record)
    await connection.call("Browser.getVersion")
    assert seen == ["Browser.getVersion"]
