"""The transport tap the browser tool builds on: ``CDPSession.on_call_result``.

These check, from the browser tool's side and against a real Chromium, the contract
the collector and the disk dump rely on: after every successful call, in the order
calls are answered, listeners get ``(method, params, result)``, where ``result`` is
the very dict ``call()`` returns; failed calls are not reported; the handle
unsubscribes; a session sees only its own page's calls; and the listener runs inside
``call()``, in the calling task's context (which is how a view tags its calls).
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from viewfinder.cdp import CDPConnection, CDPError, CDPSession, Subscription


async def test_listeners_see_each_successful_call_with_method_params_and_result(
    page: CDPSession,
) -> None:
    seen: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    subscription = page.on_call_result(lambda *call: seen.append(call))
    assert isinstance(subscription, Subscription)

    evaluated = await page.call("Runtime.evaluate", {"expression": "6 * 7", "returnByValue": True})
    captured = await page.call("Page.captureScreenshot", {"format": "jpeg", "quality": 50})

    assert [method for method, _, _ in seen] == ["Runtime.evaluate", "Page.captureScreenshot"]
    assert seen[0][1] == {"expression": "6 * 7", "returnByValue": True}
    assert seen[0][2] is evaluated and evaluated["result"]["value"] == 42
    assert seen[1][1] == {"format": "jpeg", "quality": 50}
    assert seen[1][2] is captured and captured["data"].startswith("/9j/")  # JPEG magic


async def test_failed_calls_are_not_reported(page: CDPSession) -> None:
    seen: list[str] = []
    page.on_call_result(lambda method, params, result: seen.append(method))
    with pytest.raises(CDPError):
        await page.call("Page.noSuchMethod")
    await page.call("Runtime.evaluate", {"expression": "1"})
    assert seen == ["Runtime.evaluate"]


async def test_the_handle_unsubscribes(page: CDPSession) -> None:
    seen: list[str] = []
    subscription = page.on_call_result(lambda method, params, result: seen.append(method))
    await page.call("Runtime.evaluate", {"expression": "1"})
    subscription()
    assert not subscription.active
    await page.call("Runtime.evaluate", {"expression": "2"})
    subscription.remove()  # twice is harmless
    assert seen == ["Runtime.evaluate"]


async def test_a_session_sees_only_its_own_page(
    connection: CDPConnection, page: CDPSession, site: str
) -> None:
    other = await connection.new_page(f"{site}/color/red", 100, 100)
    try:
        mine: list[str] = []
        theirs: list[str] = []
        page.on_call_result(lambda method, params, result: mine.append(method))
        other.on_call_result(lambda method, params, result: theirs.append(method))
        await other.call("Page.captureScreenshot")
        await page.call("Runtime.evaluate", {"expression": "1"})
        assert mine == ["Runtime.evaluate"]
        assert theirs == ["Page.captureScreenshot"]
    finally:
        await other.close()


async def test_listeners_run_in_the_calling_tasks_context(page: CDPSession) -> None:
    """Attribution rests on this: a context variable the caller set is visible to the
    listener, and a concurrent task's value is not."""
    caller: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="nobody")
    seen: list[tuple[str, str]] = []
    page.on_call_result(
        lambda method, params, result: seen.append((params["expression"], caller.get()))
    )

    async def call_as(name: str) -> None:
        caller.set(name)
        await page.call("Runtime.evaluate", {"expression": f"'{name}'"})

    await asyncio.gather(call_as("first"), call_as("second"), call_as("third"))
    assert sorted(seen) == [("'first'", "first"), ("'second'", "second"), ("'third'", "third")]
