"""A screenshot belongs to the call that took it, even when calls overlap.

The snippets below hand-shake through threading events kept in ``state`` so that
their captures really interleave, on different sessions and on one session.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from viewfinder.browser import BrowserSession, SnippetSessionClosedError
from viewfinder.core import Screenshot
from viewfinder.core.testing import ScreenshotLog

WAIT = "await asyncio.to_thread(state[{name!r}].wait, 30)"


async def test_overlapping_calls_on_two_sessions_each_get_only_their_own(
    open_session: Callable[..., BrowserSession], site: str, layout: Any
) -> None:
    red = open_session("red", url=f"{site}/color/red")
    green = open_session("green", url=f"{site}/color/green")
    events = {"red_took_one": threading.Event(), "green_took_one": threading.Event()}
    red.state.update(events)
    green.state.update(events)
    red_snippet = f"""
await page.screenshot()
state["red_took_one"].set()
{WAIT.format(name="green_took_one")}
await page.screenshot(format="jpeg")
"""
    green_snippet = f"""
{WAIT.format(name="red_took_one")}
await page.screenshot(format="webp")
state["green_took_one"].set()
await page.screenshot()
"""
    red_result, green_result = await asyncio.gather(
        red.aexecute(red_snippet), green.aexecute(green_snippet)
    )
    assert red_result.ok and green_result.ok, (red_result.output, green_result.output)
    assert [shot.format for shot in red_result.screenshots] == ["png", "jpeg"]
    assert [shot.format for shot in green_result.screenshots] == ["webp", "png"]
    inside = layout.inside_block()
    for shot in red_result.screenshots:
        assert _close(shot.pixel(*inside), layout.colors["red"])
    for shot in green_result.screenshots:
        assert _close(shot.pixel(*inside), layout.colors["green"])


async def test_overlapping_calls_on_one_session_run_in_turn_with_their_own_shots(
    session: BrowserSession, layout: Any
) -> None:
    paint = "await page.evaluate(\"document.getElementById('block').style.background = '{}'\")"
    first = session.aexecute(f"{paint.format('rgb(220, 20, 60)')}\nawait page.screenshot()")
    second = session.aexecute(f"{paint.format('rgb(0, 160, 0)')}\nawait page.screenshot()")
    first_result, second_result = await asyncio.gather(first, second)
    shots = {
        _colour_name(result.screenshots[0], layout): result
        for result in (first_result, second_result)
    }
    assert sorted(shots) == ["green", "red"]
    assert all(len(result.screenshots) == 1 for result in shots.values())


def test_a_task_left_behind_cannot_capture_into_a_later_call(session: BrowserSession) -> None:
    go, tried = threading.Event(), threading.Event()
    session.state.update(go=go, tried=tried)
    first = session.execute("""
async def later():
    await asyncio.to_thread(state["go"].wait, 30)
    try:
        await page.screenshot()
        state["outcome"] = "captured"
    except Exception as exc:
        state["outcome"] = exc
    state["tried"].set()
state["left_behind"] = asyncio.ensure_future(later())
""")
    assert first.ok, first.output
    second = session.execute("""
state["go"].set()
await asyncio.to_thread(state["tried"].wait, 30)
await page.screenshot(format="jpeg")
""")
    assert second.ok, second.output
    assert [shot.format for shot in second.screenshots] == ["jpeg"]
    assert isinstance(session.state["outcome"], SnippetSessionClosedError)
    assert first.screenshots == []


def test_a_capture_made_by_the_snippets_event_handler_is_its_own(session: BrowserSession) -> None:
    """Event handlers run on the connection's reader, outside the snippet's task; the
    capture is still the snippet's, because its own session sent it."""
    result = session.execute("""
done = asyncio.get_running_loop().create_future()
async def on_load(params):
    await page.screenshot(format="jpeg")
    done.set_result(None)
session.on("Page.loadEventFired", on_load)
await page.evaluate("location.reload()")
await asyncio.wait_for(done, 20)
""")
    assert result.ok, result.output
    assert [shot.format for shot in result.screenshots] == ["jpeg"]


def test_every_collected_screenshot_passes_the_captured_hook_once(
    session: BrowserSession, captured_screenshots: ScreenshotLog
) -> None:
    seen = captured_screenshots.seen
    result = session.execute("""
await page.screenshot()
await session.call("Page.captureScreenshot", {"format": "jpeg"})
""")
    assert [shot for shot, _ in seen] == result.screenshots
    assert [context for _, context in seen] == [
        {"backend": "cdp", "session_id": "test", "call_id": result.call_id, "seq": 1},
        {"backend": "cdp", "session_id": "test", "call_id": result.call_id, "seq": 2},
    ]


def _colour_name(shot: Screenshot, layout: Any) -> str:
    found = shot.pixel(*layout.inside_block())
    for name, colour in layout.colors.items():
        if _close(found, colour):
            return str(name)
    raise AssertionError(f"the block has an unexpected colour {found}")


def _close(found: tuple[int, int, int], wanted: tuple[int, int, int], slack: int = 12) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(found, wanted, strict=True))
