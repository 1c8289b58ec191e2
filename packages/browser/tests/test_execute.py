"""browser_execute against a real headless Chromium: output, return values, screenshots."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from viewfinder.browser import (
    BrowserSession,
    BrowserSessions,
    ElementNotFoundError,
    abrowser_execute,
    browser_execute,
    close_default_sessions,
    default_sessions,
)
from viewfinder.cdp import CDP_URL_ENV, ChromiumProcess


def test_navigates_to_a_local_page_and_reads_its_title(session: BrowserSession, site: str) -> None:
    result = session.execute(f"""
await page.goto("{site}/form")
print("title:", await page.title())
return await page.url()
""")
    assert result.ok, result.output
    assert result.output.splitlines() == [
        "title: form",
        f'Returned: "{site}/form"',
        "[no screenshots attached]",
    ]
    assert result.result == f"{site}/form"
    assert result.screenshots == []


def test_two_captures_come_back_as_png_then_jpeg_with_their_pixels(
    session: BrowserSession, layout: Any
) -> None:
    result = session.execute(
        """
await page.screenshot()
await page.screenshot(format="jpeg", quality=90)
""",
        description="two shots",
    )
    assert result.ok, result.output
    assert result.output.endswith("[2 screenshots attached]")
    assert result.description == "two shots"
    png, jpeg = result.screenshots
    assert (png.format, png.mime_type) == ("png", "image/png")
    assert (jpeg.format, jpeg.mime_type) == ("jpeg", "image/jpeg")
    for shot in (png, jpeg):
        assert shot.size == layout.viewport
        assert shot.source == "cdp"
    blue = layout.colors["blue"]
    assert png.pixel(*layout.inside_block()) == blue
    assert png.pixel(*layout.outside_block()) == (255, 255, 255)
    assert _close(jpeg.pixel(*layout.inside_block()), blue)
    assert _close(jpeg.pixel(*layout.outside_block()), (255, 255, 255))
    media_types = [attachment.media_type for attachment in result.attachments]
    assert media_types == ["image/png", "image/jpeg"]
    assert result.attachments[0].anthropic["source"]["data"] == png.b64()


def test_webp_and_raw_cdp_captures_are_collected_too(session: BrowserSession, layout: Any) -> None:
    result = session.execute("""
shot = await page.screenshot(format="webp")
raw = await session.call("Page.captureScreenshot", {"format": "png"})
return len(raw["data"]) > 0
""")
    assert result.ok, result.output
    assert [shot.mime_type for shot in result.screenshots] == ["image/webp", "image/png"]
    assert result.screenshots[1].pixel(*layout.inside_block()) == layout.colors["blue"]
    assert result.result is True


def test_a_region_and_a_full_page_capture(session: BrowserSession, layout: Any) -> None:
    x, y, w, h = layout.block
    result = session.execute(f"""
from viewfinder.core import Region
await page.screenshot(region=Region(x={x}, y={y}, width={w}, height={h}))
await page.evaluate("document.body.style.height = '1000px'")
await page.screenshot(full_page=True)
""")
    assert result.ok, result.output
    part, whole = result.screenshots
    assert part.size == (w, h)
    assert part.pixel(0, 0) == layout.colors["blue"]
    assert whole.size == (layout.viewport[0], 1000)


def test_base64_images_in_a_return_value_become_pointers(session: BrowserSession) -> None:
    raw = session.execute("return await session.call('Page.captureScreenshot', {})")
    assert raw.result == {"data": "<screenshot 1: png 320x240, attached>"}
    assert len(raw.screenshots) == 1 and len(raw.output) < 200  # no base64 in the text
    mine = session.execute("shot = await page.screenshot()\nreturn [shot.b64(), shot.data_url()]")
    assert mine.result == ["<screenshot 1: png 320x240, attached>"] * 2
    canvas = session.execute(
        "return await page.evaluate(\"document.createElement('canvas').toDataURL()\")"
    )
    assert canvas.result.startswith("<image: png 300x150, ")
    assert "left out" in canvas.result and "base64," not in canvas.output
    # text that only looks like the start of an image stays as it is
    lookalike = "iVBORw0KGgo" + "not base64 at all! " * 5
    assert session.execute(f"return {lookalike!r}").result == lookalike


def test_return_values_become_json(session: BrowserSession) -> None:
    result = session.execute("""
shot = await page.screenshot()
return {"numbers": (1, 2.5), "nested": [None, True], "shot": shot}
""")
    assert result.result == {
        "numbers": [1, 2.5],
        "nested": [None, True],
        "shot": "<screenshot 1: png 320x240, attached>",
    }
    assert "Returned: " in result.output
    # Without a return, a final expression is the value, as in a REPL.
    assert session.execute("await page.evaluate('1 + 2')").result == 3
    assert session.execute("x = 1").result is None
    # A snippet ending in a capture has it attached; it is not repeated as the value.
    ends_in_capture = session.execute("await page.screenshot()")
    assert ends_in_capture.result is None
    assert ends_in_capture.output == "[1 screenshot attached]"
    returned = session.execute("return await page.screenshot()")
    assert returned.result == "<screenshot 1: png 320x240, attached>"


def test_a_value_that_is_not_json_comes_back_as_its_repr_with_a_note(
    session: BrowserSession,
) -> None:
    result = session.execute("return {1: object()}")
    assert result.ok
    assert isinstance(result.result, str) and result.result.startswith("{1: <object object")
    assert "not JSON-serialisable" in result.output
    assert "dict key 1 is not a string" in result.output
    assert session.execute("return float('nan')").result == "nan"


def test_printed_output_is_the_calls_own(session: BrowserSession) -> None:
    result = session.execute("""
import sys
print("a", 1, sep="-")
print("no newline", end="")
print()
print("to stderr", file=sys.stderr)
""")
    assert result.output.splitlines() == ["a-1", "no newline", "[no screenshots attached]"]


def test_state_and_the_page_persist_between_calls(session: BrowserSession) -> None:
    first = session.execute("""
state["visits"] = state.get("visits", 0) + 1
await page.evaluate("window.marker = 'kept'")
""")
    assert first.ok, first.output
    second = session.execute("""
state["visits"] += 1
return [state["visits"], await page.evaluate("window.marker")]
""")
    assert second.result == [2, "kept"]
    assert session.state["visits"] == 2


def test_page_helpers_click_type_and_press(session: BrowserSession, site: str) -> None:
    result = session.execute(f"""
await page.goto("{site}/form")
await page.click("#button")
await page.click(x=80, y=40)
await page.type("hello", selector="#field")
await page.press("Enter")
await page.wait_for("window.entered !== null")
return await page.evaluate("[window.clicks, window.entered]")
""")
    assert result.ok, result.output
    assert result.result == [2, "hello"]


def test_a_selector_that_matches_nothing_says_so(session: BrowserSession) -> None:
    result = session.execute('await page.click("#missing")')
    assert result.error is not None
    assert result.error.type == ElementNotFoundError.__name__
    assert "no element matches '#missing'" in result.output


def test_sessions_by_id_persist_and_share_one_browser(
    chromium: ChromiumProcess, site: str, layout: Any
) -> None:
    with BrowserSessions(
        cdp_url=chromium.ws_url, url=f"{site}/color/green", width=200, height=150
    ) as sessions:
        sessions.execute("state['who'] = 'a'", session_id="a")
        sessions.execute("state['who'] = 'b'", session_id="b")
        assert sessions.execute("return state['who']", session_id="a").result == "a"
        assert sessions.get("b") is sessions.get("b")
        assert sessions.ids() == ["a", "b"]
        shot = sessions.execute("await page.screenshot()", session_id="b").screenshots[0]
        assert shot.size == (200, 150)
        assert shot.pixel(*layout.inside_block()) == layout.colors["green"]
        sessions.close_session("a")
        assert sessions.execute("return state.get('who')", session_id="a").result is None
    assert chromium.running  # an attached browser is left running


async def test_aexecute_from_an_event_loop(open_session: Callable[..., BrowserSession]) -> None:
    async with open_session("async") as session:
        result = await session.aexecute("return await page.title()")
    assert result.result == "blue page"


def _close(found: tuple[int, int, int], wanted: tuple[int, int, int], slack: int = 12) -> bool:
    return all(abs(a - b) <= slack for a, b in zip(found, wanted, strict=True))


@pytest.mark.parametrize("snippet", ["", "   \n", "pass"])
def test_an_empty_snippet_is_fine(session: BrowserSession, snippet: str) -> None:
    result = session.execute(snippet)
    assert result.ok and result.result is None
    assert result.output == "[no screenshots attached]"


# -- connecting ------------------------------------------------------------------------------


def test_attaches_by_http_address_host_port_or_environment(
    chromium: ChromiumProcess, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    address = chromium.http_url.removeprefix("http://")
    for cdp_url in (chromium.http_url, address):
        with BrowserSession(cdp_url=cdp_url, url=f"{site}/color/red") as session:
            assert session.browser.attached
            assert session.execute("return await page.title()").result == "red page"
    monkeypatch.setenv(CDP_URL_ENV, address)
    with BrowserSession(url=f"{site}/color/green") as session:
        assert session.browser.cdp_url == chromium.http_url
        assert session.execute("return await page.title()").result == "green page"
        assert session.browser.process is None  # nothing was launched
    assert chromium.running


def test_launches_chromium_by_default_and_stops_it_on_close(
    site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CDP_URL_ENV, raising=False)
    with BrowserSession(url=f"{site}/color/blue", width=200, height=100) as session:
        assert session.execute("return await page.title()").result == "blue page"
        process = session.browser.process
        assert process is not None and process.running
    assert not process.running


async def test_module_level_browser_execute(
    chromium: ChromiumProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CDP_URL_ENV, chromium.ws_url)
    close_default_sessions()
    try:
        first = await asyncio.to_thread(browser_execute, "state['n'] = 1", session_id="m")
        assert first.ok, first.output
        second = await abrowser_execute("return state['n'] + 1", session_id="m")
        assert second.result == 2
        assert default_sessions().ids() == ["m"]
    finally:
        close_default_sessions()
