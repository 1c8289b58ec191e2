"""Console messages and uncaught page errors of a call are in its output, capped."""

from __future__ import annotations

from collections.abc import Callable

from viewfinder.browser import BrowserSession
from viewfinder.browser.tab import MAX_PAGE_LINES


def test_console_messages_and_page_errors_are_reported_once(
    open_session: Callable[..., BrowserSession],
) -> None:
    session = open_session("console", url="data:text/html,<p>console</p>")
    logged = session.execute(
        "await page.evaluate(\"console.log('hello', 42); console.warn('careful')\")", 10
    )
    assert logged.ok, logged.output
    assert "[console.log] hello 42\n[console.warning] careful" in logged.output
    thrown = session.execute(
        "await page.evaluate(\"setTimeout(() => { throw new Error('boom') }, 0)\")\n"
        "import asyncio\nawait asyncio.sleep(0.5)",
        10,
    )
    assert "[page error] Error: boom" in thrown.output
    quiet = session.execute("return 1", 10)
    assert "console" not in quiet.output and "page error" not in quiet.output


def test_a_flood_of_console_lines_is_capped_to_the_newest(
    open_session: Callable[..., BrowserSession],
) -> None:
    session = open_session("console-flood", url="data:text/html,<p>flood</p>")
    result = session.execute(
        "await page.evaluate(\"for (let i = 0; i < 1000; i++) console.log('n', i)\")", 20
    )
    lines = [line for line in result.output.splitlines() if line.startswith("[console.log]")]
    assert len(lines) == MAX_PAGE_LINES and lines[-1] == "[console.log] n 999"
    assert f"[{1000 - MAX_PAGE_LINES} earlier page lines left out]" in result.output
