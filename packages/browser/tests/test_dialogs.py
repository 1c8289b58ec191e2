"""alert, confirm, prompt: answered at once, and reported in the call's output."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from viewfinder.browser import BrowserSession


@pytest.mark.parametrize(
    ("script", "returned", "reported"),
    [
        ("alert('hello'); 1", "Returned: 1", "[alert dialog 'hello' accepted]"),
        ("confirm('sure?')", "Returned: true", "[confirm dialog 'sure?' accepted]"),
        ("prompt('name?', 'Ada')", 'Returned: "Ada"', "[prompt dialog 'name?' accepted]"),
    ],
)
def test_a_dialog_is_accepted_and_reported(
    open_session: Callable[..., BrowserSession], script: str, returned: str, reported: str
) -> None:
    session = open_session("dialogs", url="data:text/html,<p>dialogs</p>")
    result = session.execute(f"return await page.evaluate({script!r})", 10)
    assert result.ok, result.output
    assert reported in result.output and returned in result.output
    # the page is usable afterwards, and the dialog is reported once
    after = session.execute("return await page.title()", 10)
    assert after.ok and "dialog" not in after.output


def test_a_dialog_opened_between_calls_does_not_block_the_next(
    open_session: Callable[..., Any],
) -> None:
    session = open_session("dialog-timer", url="data:text/html,<p>timer</p>")
    started = session.execute(
        "await page.evaluate(\"setTimeout(() => alert('later'), 100)\")\n"
        "import asyncio\nawait asyncio.sleep(0.5)",
        10,
    )
    assert started.ok, started.output
    result = session.execute("return 1 + 1", 10)
    assert result.ok and "Returned: 2" in result.output
    assert "[alert dialog 'later' accepted]" in started.output + result.output
