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


@pytest.mark.parametrize(
    ("choice", "script", "returned", "reported"),
    [
        ("False", "confirm('sure?')", "Returned: false", "[confirm dialog 'sure?' dismissed]"),
        (
            "False",
            "[prompt('name?', 'Ada')]",
            "Returned: [null]",
            "[prompt dialog 'name?' dismissed]",
        ),
        (
            "'Grace'",
            "prompt('name?', 'Ada')",
            'Returned: "Grace"',
            "[prompt dialog 'name?' accepted with 'Grace']",
        ),
        ("True", "confirm('ok?')", "Returned: true", "[confirm dialog 'ok?' accepted]"),
        # a function sees the dialog; an async one is awaited
        (
            "lambda d: d.type != 'confirm'",
            "[alert('a'), confirm('c')]",
            "Returned: [null, false]",
            "[confirm dialog 'c' dismissed]",
        ),
        (
            "answer",
            "prompt('who?')",
            'Returned: "prompt:who?"',
            "[prompt dialog 'who?' accepted with 'prompt:who?']",
        ),
    ],
)
def test_a_snippet_chooses_how_dialogs_are_answered(
    open_session: Callable[..., BrowserSession],
    choice: str,
    script: str,
    returned: str,
    reported: str,
) -> None:
    session = open_session("dialog-choice", url="data:text/html,<p>choose</p>")
    result = session.execute(
        "async def answer(dialog):\n"
        "    await asyncio.sleep(0.01)\n"
        "    return f'{dialog.type}:{dialog.message}'\n"
        f"page.on_dialog({choice})\n"
        f"return await page.evaluate({script!r})",
        10,
    )
    assert result.ok, result.output
    assert reported in result.output and returned in result.output
    # the choice ends with its call: the next call's dialogs are accepted again
    after = session.execute("return await page.evaluate(\"confirm('again?')\")", 10)
    assert "Returned: true" in after.output and "accepted" in after.output


def test_a_failing_dialog_handler_still_answers_the_dialog(
    open_session: Callable[..., BrowserSession],
) -> None:
    session = open_session("dialog-raise", url="data:text/html,<p>raise</p>")
    result = session.execute(
        "page.on_dialog(lambda dialog: 1 / 0)\nreturn await page.evaluate(\"confirm('x')\")", 10
    )
    assert result.ok, result.output
    assert "Returned: true" in result.output
    assert "[confirm dialog 'x' accepted; the on_dialog handler failed (ZeroDivisionError" in (
        result.output
    )


def test_on_dialog_refuses_what_it_cannot_use(open_session: Callable[..., BrowserSession]) -> None:
    session = open_session("dialog-bad", url="data:text/html,<p>bad</p>")
    result = session.execute("page.on_dialog(3)", 10)
    assert result.error is not None and result.error.type == "TypeError"
    assert "True, False, a string, None or a function" in result.error.message


def test_beforeunload_is_accepted_by_default_and_can_be_refused(
    open_session: Callable[..., BrowserSession], site: str
) -> None:
    session = open_session("beforeunload", url=f"{site}/leave")
    # Chromium asks before unloading only a page the user interacted with: click it first
    refused = session.execute(
        "seen = []\n"
        "def refuse(dialog):\n"
        "    seen.append(dialog.type)\n"
        "    return False\n"
        "page.on_dialog(refuse)\n"
        "await page.click(x=10, y=10)\n"
        f"await page.evaluate(\"location.href = '{site}/form'\")\n"
        "for _ in range(100):\n"
        "    if seen:\n"
        "        break\n"
        "    await asyncio.sleep(0.05)\n"
        "await asyncio.sleep(0.3)\n"
        "return [seen, await page.title()]",
        15,
    )
    assert refused.ok, refused.output
    assert 'Returned: [["beforeunload"], "stay"]' in refused.output
    assert "[beforeunload dialog '' dismissed]" in refused.output

    left = session.execute(
        f"await page.click(x=10, y=10)\nawait page.goto('{site}/form')\nreturn await page.title()",
        15,
    )
    assert left.ok, left.output
    assert "[beforeunload dialog '' accepted]" in left.output
    assert 'Returned: "form"' in left.output
