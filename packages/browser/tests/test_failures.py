"""What goes wrong in a snippet comes back as an error result; what the caller gets
wrong raises. Timed-out snippets are cut off from the page."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from viewfinder.browser import (
    BrowserSession,
    InvalidTimeoutError,
    SnippetSessionClosedError,
)
from viewfinder.cdp import CDPConnectError
from viewfinder.core import ViewfinderError

# -- the snippet's own mistakes -----------------------------------------------------------


def test_a_syntax_error_is_an_error_result_pointing_at_the_line(session: BrowserSession) -> None:
    result = session.execute("x = 1\nprint(x\n")
    assert not result.ok
    assert result.error is not None
    assert result.error.kind == "syntax"
    assert result.error.type == "SyntaxError"
    assert "line 2" in result.error.message
    assert 'File "<snippet>", line 2' in result.output
    assert "print(x" in result.output
    assert result.output.endswith("[no screenshots attached]")


def test_a_raising_snippet_gives_a_traceback_of_its_own_lines(
    session: BrowserSession, layout: Any
) -> None:
    result = session.execute("""
await page.screenshot()
def check(value):
    if value != "red page":
        raise ValueError(f"unexpected title {value!r}")
check(await page.title())
""")
    assert result.error is not None
    assert result.error.kind == "exception"
    assert result.error.type == "ValueError"
    assert result.error.traceback == (
        "Traceback (most recent call last):\n"
        '  File "<snippet>", line 6, in <snippet>\n'
        "    check(await page.title())\n"
        '  File "<snippet>", line 5, in check\n'
        '    raise ValueError(f"unexpected title {value!r}")\n'
        "ValueError: unexpected title 'blue page'"
    )
    assert "viewfinder" not in result.error.traceback  # no frames but the snippet's
    # The screenshot taken before the exception is still attached.
    assert result.output.endswith("[1 screenshot attached]")
    assert result.screenshots[0].pixel(*layout.inside_block()) == layout.colors["blue"]


def test_an_exception_inside_the_cdp_client_shows_the_snippet_line(
    session: BrowserSession,
) -> None:
    result = session.execute('await session.call("Page.noSuchMethod")')
    assert result.error is not None and result.error.type == "CDPError"
    assert 'line 1, in <snippet>\n    await session.call("Page.noSuchMethod")' in result.output
    assert "Page.noSuchMethod" in result.error.message


def test_exit_in_a_snippet_does_not_stop_the_session(session: BrowserSession) -> None:
    result = session.execute("raise SystemExit(3)")
    assert result.error is not None and result.error.type == "SnippetExitError"
    assert session.execute("return 1").result == 1


# -- timeouts -------------------------------------------------------------------------------


def test_a_timed_out_snippet_cannot_send_cdp_commands_afterwards(
    session: BrowserSession,
) -> None:
    done = threading.Event()
    session.state["done"] = done
    # set before the timed snippet: a loaded machine's first evaluate may take its second
    assert session.execute("await page.evaluate('window.before = 1')").error is None
    result = session.execute(
        """
try:
    await asyncio.sleep(60)
except asyncio.CancelledError:
    pass  # a snippet that swallows its cancellation and carries on
try:
    await session.call("Runtime.evaluate", {"expression": "window.after = 1"})
    state["outcome"] = "sent"
except Exception as exc:
    state["outcome"] = exc
state["done"].set()
""",
        timeout=2,
    )
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert "ran past its 2s timeout" in result.error.message
    assert "line 3, in <snippet>\n    await asyncio.sleep(60)" in (result.error.traceback or "")
    assert done.wait(30)
    assert isinstance(session.state["outcome"], SnippetSessionClosedError)
    # The page was kept, and the command after the timeout never reached it.
    after = session.execute("return await page.evaluate('[window.before, window.after]')")
    assert after.result == [1, None]


def test_a_snippet_that_blocks_its_loop_is_abandoned_and_cut_off(
    session: BrowserSession,
) -> None:
    release, done = threading.Event(), threading.Event()
    session.state.update(release=release, done=done)
    session.execute("await page.evaluate('window.marker = 1')")
    try:
        result = session.execute(
            """
print("going to block")
state["release"].wait(120)  # blocks the event loop: cannot be cancelled
try:
    await session.evaluate("1")
    state["outcome"] = "sent"
except Exception as exc:
    state["outcome"] = exc
state["done"].set()
""",
            timeout=1,
        )
    finally:
        release.set()
    assert result.error is not None and result.error.kind == "timeout"
    assert "blocked its event loop" in result.error.message
    assert result.output.startswith("going to block\n")
    assert done.wait(30)
    assert isinstance(session.state["outcome"], SnippetSessionClosedError)
    # The next call runs on a new loop and a new page.
    after = session.execute("return await page.evaluate('window.marker === undefined')")
    assert after.ok, after.output
    assert after.result is True


def test_a_page_stuck_in_a_script_loop_is_recovered(session: BrowserSession) -> None:
    result = session.execute(
        'await session.call("Runtime.evaluate", {"expression": "while (true) {}"})', timeout=1
    )
    assert result.error is not None and result.error.kind == "timeout"
    assert "page" in result.error.message
    after = session.execute("return await page.evaluate('21 * 2')")
    assert after.ok, after.output
    assert after.result == 42


async def test_calls_queued_behind_a_timeout_still_run(
    open_session: Callable[..., BrowserSession],
) -> None:
    session = open_session("queue")
    slow = asyncio.ensure_future(session.aexecute("await asyncio.sleep(60)", timeout=1))
    quick = asyncio.ensure_future(session.aexecute("return 'quick'"))
    slow_result, quick_result = await asyncio.gather(slow, quick)
    assert slow_result.error is not None and slow_result.error.kind == "timeout"
    assert quick_result.result == "quick"


# -- the caller's mistakes -----------------------------------------------------------------


@pytest.mark.parametrize("timeout", [0, 0.5, 601, -1, float("nan"), float("inf"), True, "60"])
def test_a_timeout_outside_1_to_600_seconds_is_refused(
    session: BrowserSession, timeout: Any
) -> None:
    with pytest.raises(InvalidTimeoutError, match="from 1 to 600") as caught:
        session.execute("return 1", timeout=timeout)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("timeout", [1, 1.5, 600])
def test_timeouts_at_the_bounds_are_accepted(session: BrowserSession, timeout: float) -> None:
    assert session.execute("return 'ok'", timeout=timeout).result == "ok"


def test_an_unreachable_cdp_url_raises_a_clear_error(free_port: int) -> None:
    with (
        BrowserSession(cdp_url=f"http://127.0.0.1:{free_port}") as session,
        pytest.raises(CDPConnectError) as caught,
    ):
        session.execute("return 1")
    message = str(caught.value)
    assert f"127.0.0.1:{free_port}" in message
    assert "viewfinder browser launch" in message
    assert isinstance(caught.value, ViewfinderError)


def test_an_unreachable_ws_url_raises_too(free_port: int) -> None:
    url = f"ws://127.0.0.1:{free_port}/devtools/browser/nothing"
    with BrowserSession(cdp_url=url) as session, pytest.raises(CDPConnectError):
        session.execute("return 1")


def test_a_closed_session_refuses_calls(session: BrowserSession) -> None:
    session.close()
    with pytest.raises(ViewfinderError, match="is closed"):
        session.execute("return 1")
