"""Page sessions: opening, navigating, evaluating, closing."""

from __future__ import annotations

import math

import pytest

from viewfinder.cdp import (
    CDPConnection,
    CDPError,
    CDPNavigationError,
    CDPSession,
    JavaScriptError,
)


async def test_new_page_has_the_viewport_and_the_page_loaded(page: CDPSession, site: str) -> None:
    assert page.viewport == (640, 480)
    assert await page.evaluate("[innerWidth, innerHeight]") == [640, 480]
    assert await page.evaluate("devicePixelRatio") == 1
    assert await page.evaluate("location.href") == f"{site}/block"
    assert await page.evaluate("document.readyState") == "complete"


async def test_navigate_waits_for_the_load(page: CDPSession, site: str) -> None:
    result = await page.navigate(f"{site}/form")
    assert result["frameId"]
    assert await page.evaluate("document.readyState") == "complete"
    assert await page.evaluate("window.clicks") == 0


async def test_navigate_to_data_and_blank_urls(page: CDPSession) -> None:
    await page.navigate("data:text/html,<title>inline</title>")
    assert await page.evaluate("document.title") == "inline"
    await page.navigate("about:blank")
    assert await page.evaluate("location.href") == "about:blank"


async def test_a_same_document_navigation_returns_at_once(page: CDPSession, site: str) -> None:
    await page.navigate(f"{site}/block#part")
    assert await page.evaluate("location.hash") == "#part"


async def test_an_unloadable_url_is_a_navigation_error(page: CDPSession, free_port: int) -> None:
    with pytest.raises(CDPNavigationError, match="ERR_CONNECTION_REFUSED"):
        await page.navigate(f"http://127.0.0.1:{free_port}/")


async def test_evaluate_returns_json_values(page: CDPSession) -> None:
    assert await page.evaluate("({a: [1, 'two', null, true]})") == {"a": [1, "two", None, True]}
    assert await page.evaluate("undefined") is None
    assert math.isnan(await page.evaluate("NaN"))
    assert await page.evaluate("-Infinity") == -math.inf
    assert await page.evaluate("2n ** 70n") == 2**70
    assert await page.evaluate("Promise.resolve(5)", await_promise=True) == 5


async def test_a_javascript_exception_raises_with_its_text(page: CDPSession) -> None:
    with pytest.raises(JavaScriptError) as caught:
        await page.evaluate("throw new TypeError('no such thing')")
    assert "TypeError: no such thing" in str(caught.value)
    assert isinstance(caught.value, CDPError)
    with pytest.raises(JavaScriptError, match="plain string"):
        await page.evaluate("Promise.reject('plain string')", await_promise=True)


async def test_closing_a_page_closes_its_tab(connection: CDPConnection, site: str) -> None:
    session = await connection.new_page(f"{site}/block", 320, 240)
    targets = await connection.call("Target.getTargets")
    assert session.target_id in {t["targetId"] for t in targets["targetInfos"]}
    await session.close()
    await session.close()  # idempotent
    targets = await connection.call("Target.getTargets")
    assert session.target_id not in {t["targetId"] for t in targets["targetInfos"]}
    with pytest.raises(CDPError):
        await session.call("Runtime.evaluate", {"expression": "1"})


async def test_attach_to_an_existing_tab_leaves_it_open(
    connection: CDPConnection, page: CDPSession
) -> None:
    other = await CDPSession.attach(connection, page.target_id)
    assert await other.evaluate("location.pathname") == "/block"
    await other.close()
    assert await page.evaluate("1") == 1  # the tab is still there
