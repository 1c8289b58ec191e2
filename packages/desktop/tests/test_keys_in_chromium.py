"""Keys as models name them, pressed in a real Chromium on the desktop; what the page
got is read back over the DevTools protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from viewfinder.core.testing import wait_until
from viewfinder.desktop import Desktop

PAGE = (
    "data:text/html,<body style='margin:0'>"
    "<input id=field value='hello world' autofocus style='font-size:30px;width:600px'>"
    "<script>window.keys=[];addEventListener('keydown',e=>keys.push(e.key))</script></body>"
)


@pytest.fixture(scope="module")
def browser_desktop() -> Iterator[Desktop]:
    with Desktop(size=(800, 600), browser_url=PAGE) as desktop:
        yield desktop


def evaluate(desktop: Desktop, expression: str) -> Any:
    from viewfinder.cdp import connect
    from viewfinder.cdp.session import CDPSession

    async def run() -> Any:
        connection = await connect(desktop.browser.ws_url)
        try:
            targets = await connection.call("Target.getTargets")
            page = next(t["targetId"] for t in targets["targetInfos"] if t["type"] == "page")
            session = await CDPSession.attach(connection, page)
            return await session.evaluate(expression)
        finally:
            await connection.close()

    return asyncio.run(run())


def click_field(desktop: Desktop) -> None:
    """Click into the field, so the page (not the address bar) has the keyboard."""
    top = evaluate(
        desktop,
        "outerHeight - innerHeight + field.getBoundingClientRect().top"
        " + field.getBoundingClientRect().height / 2",
    )
    result = desktop.computer()({"action": "left_click", "coordinate": [300, round(top)]})
    assert not result.is_error, result.text
    wait_until(lambda: evaluate(desktop, "document.hasFocus()"), "the page focused")


def reset_field(desktop: Desktop) -> None:
    evaluate(
        desktop,
        "field.value='hello world';field.focus();field.setSelectionRange(11,11);keys.length=0",
    )
    assert evaluate(desktop, "[field.selectionStart, field.selectionEnd]") == [11, 11]


@pytest.mark.parametrize(
    "action",
    [
        {"type": "keypress", "keys": ["CTRL", "A"]},
        {"type": "keypress", "keys": ["ctrl", "a"]},
        {"action": "key", "text": "ctrl+a"},
    ],
)
def test_select_all_selects_the_whole_field(browser_desktop: Desktop, action: dict) -> None:
    reset_field(browser_desktop)
    click_field(browser_desktop)
    reset_field(browser_desktop)
    tool = browser_desktop.computer()
    result = tool(action)
    assert not result.is_error, result.text
    wait_until(
        lambda: evaluate(browser_desktop, "[field.selectionStart, field.selectionEnd]") == [0, 11],
        "the whole field selected",
    )
    # Control and a lower-case a, no Shift: "Search Tabs" (ctrl+shift+a) did not open
    assert evaluate(browser_desktop, "keys") == ["Control", "a"]


def test_typed_text_beyond_the_keymap_reaches_the_field(browser_desktop: Desktop) -> None:
    click_field(browser_desktop)
    evaluate(browser_desktop, "field.value='';field.focus()")
    tool = browser_desktop.computer()
    text = "東京都渋谷区神南一丁目十九番十一号の会議室で打ち合わせをします" * 2
    result = tool({"type": "type", "text": text})
    assert not result.is_error, result.text
    wait_until(lambda: evaluate(browser_desktop, "field.value") == text, "the typed text")
