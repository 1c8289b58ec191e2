"""The members that move: navigation, screenshots, the mouse and the keyboard."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import math
import re
import time
from typing import TYPE_CHECKING, Any

from viewfinder.browser.toolset import actions
from viewfinder.browser.toolset.errors import MemberError
from viewfinder.browser.toolset.inputs import (
    HoldKeyInput,
    HoverInput,
    KeyInput,
    LeftClickDragInput,
    LeftMouseDownInput,
    LeftMouseUpInput,
    MouseMoveInput,
    NavigateInput,
    ScreenshotInput,
    ScrollInput,
    TypeInput,
    WaitInput,
    ZoomInput,
)
from viewfinder.browser.toolset.tab import Tab
from viewfinder.cdp import CDPError, CDPNavigationError
from viewfinder.core import ActionError, Screenshot
from viewfinder.core.imaging import image_size
from viewfinder.core.result_budget import fit_image

if TYPE_CHECKING:
    from viewfinder.browser.toolset.executor import BrowserToolset

Outcome = str | tuple[str, list[Screenshot]]
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://|^(about|data|file|blob|chrome):")
BUTTONS = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}
_WHEEL = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
#: Most times a zoom enlarges its region.
MAX_ZOOM = 4.0


async def navigate(ts: BrowserToolset, tab: Tab, inp: NavigateInput) -> str:
    where = inp.url.strip()
    if where in ("back", "forward"):
        await _history(ts, tab, -1 if where == "back" else 1)
    elif where == "reload":
        loaded = tab.session.expect_event("Page.loadEventFired")
        try:
            await tab.session.call("Page.reload", timeout=ts.timeout)
            await asyncio.wait_for(loaded, ts.timeout)
        finally:
            loaded.cancel()
    else:
        url = where if _SCHEME.match(where) else "https://" + where
        try:
            await tab.session.navigate(url, timeout=ts.timeout)
        except CDPNavigationError as exc:
            raise MemberError("url", str(exc)) from None
    title, url = await tab.session.evaluate("[document.title, location.href]")
    return f"tab {tab.tab_id} shows {url}" + (f" ({title})" if title else "")


async def _history(ts: BrowserToolset, tab: Tab, step: int) -> None:
    history = await tab.session.call("Page.getNavigationHistory")
    index = history["currentIndex"] + step
    entries = history["entries"]
    if not 0 <= index < len(entries):
        raise MemberError("url", f"there is no page to go {'back' if step < 0 else 'forward'} to")

    def main(params: dict[str, Any]) -> bool:
        frame = params.get("frame") or params
        return frame.get("id", frame.get("frameId")) == tab.main_frame

    # a page restored from the back-forward cache fires no load: its navigation is enough
    moved = [
        tab.session.expect_event("Page.frameNavigated", main),
        tab.session.expect_event("Page.navigatedWithinDocument", main),
    ]
    try:
        await tab.session.call("Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]})
        await asyncio.wait(moved, timeout=ts.timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future in moved:
            future.cancel()
    deadline = time.monotonic() + ts.timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(CDPError):
            if await tab.session.evaluate("document.readyState") == "complete":
                return
        await asyncio.sleep(0.05)


async def _capture(ts: BrowserToolset, tab: Tab, clip: dict[str, float] | None) -> Screenshot:
    params: dict[str, Any] = {"format": "png"}
    if clip is not None:
        params["clip"] = clip
    answer = await tab.session.call("Page.captureScreenshot", params, timeout=ts.timeout)
    data = base64.b64decode(answer["data"])
    width, height = image_size(data)
    return Screenshot(data=data, format="png", width=width, height=height, source="cdp")


async def screenshot(ts: BrowserToolset, tab: Tab, inp: ScreenshotInput) -> Outcome:
    shot = await _capture(ts, tab, None)
    fitted = fit_image(shot, ts.budget)
    css_width, _ = await actions.viewport(tab)
    tab.scale = fitted.screenshot.width / css_width if css_width else 1.0
    text = f"tab {tab.tab_id}: the viewport, {fitted.screenshot.width}x{fitted.screenshot.height}"
    if abs(tab.scale - 1.0) > 1e-3:
        text += f"; points you give are in this image's pixels ({tab.scale:.4g} per page pixel)"
    return text, [fitted.screenshot]


async def zoom(ts: BrowserToolset, tab: Tab, inp: ZoomInput) -> Outcome:
    if len(inp.region) != 4:
        raise MemberError("region", "give four numbers: [x0, y0, x1, y1]")
    x0, y0, x1, y1 = (value / tab.scale for value in inp.region)
    width, height = await actions.viewport(tab)
    if not (0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height):
        raise MemberError(
            "region", f"{inp.region} is not a region inside the viewport with x0 < x1, y0 < y1"
        )
    left, top = await tab.session.scroll_offset()
    w, h = x1 - x0, y1 - y0
    budget = ts.budget
    factor = min(
        MAX_ZOOM, budget.image_long_edge / max(w, h), math.sqrt(budget.image_max_pixels / (w * h))
    )
    clip = {"x": x0 + left, "y": y0 + top, "width": w, "height": h, "scale": max(factor, 1.0)}
    fitted = fit_image(await _capture(ts, tab, clip), budget)
    shot = fitted.screenshot
    return f"tab {tab.tab_id}: {inp.region} enlarged to {shot.width}x{shot.height}", [shot]


async def click(ts: BrowserToolset, tab: Tab, member: str, inp: Any) -> str:
    button, count = BUTTONS[member]
    mods = actions.modifiers(inp.modifiers)
    at, named = await actions.point_of(tab, inp.target)
    await tab.input.click(at, button, count, mods)
    return f"{member.replace('_', ' ')} on {named}"


async def hover(ts: BrowserToolset, tab: Tab, inp: HoverInput) -> str:
    at, named = await actions.point_of(tab, inp.target)
    await tab.input.move(at)
    return f"the pointer is over {named}"


async def mouse_move(ts: BrowserToolset, tab: Tab, inp: MouseMoveInput) -> str:
    await tab.input.move(await actions.coordinate_point(tab, inp.target))
    return f"the pointer is at ({inp.target.x}, {inp.target.y})"


async def drag(ts: BrowserToolset, tab: Tab, inp: LeftClickDragInput) -> str:
    start = await actions.coordinate_point(tab, inp.from_, "from")
    end = await actions.coordinate_point(tab, inp.target)
    await tab.input.drag(start, end)
    return f"dragged from ({inp.from_.x}, {inp.from_.y}) to ({inp.target.x}, {inp.target.y})"


async def mouse_down(ts: BrowserToolset, tab: Tab, inp: LeftMouseDownInput) -> str:
    await tab.input.move(await actions.coordinate_point(tab, inp.target))
    await tab.input.button("left", pressed=True)
    return f"the left button is down at ({inp.target.x}, {inp.target.y})"


async def mouse_up(ts: BrowserToolset, tab: Tab, inp: LeftMouseUpInput) -> str:
    await tab.input.move(await actions.coordinate_point(tab, inp.target))
    await tab.input.button("left", pressed=False)
    return f"the left button is up at ({inp.target.x}, {inp.target.y})"


async def scroll(ts: BrowserToolset, tab: Tab, inp: ScrollInput) -> str:
    at = await actions.coordinate_point(tab, inp.target)
    amount = inp.scroll_amount or 3
    dx, dy = _WHEEL[inp.scroll_direction]
    await tab.input.scroll(at, dx * amount, dy * amount)
    return f"scrolled {inp.scroll_direction} {amount} at ({inp.target.x}, {inp.target.y})"


async def type_text(ts: BrowserToolset, tab: Tab, inp: TypeInput) -> str:
    await tab.input.type(inp.text)
    return f"typed {len(inp.text)} characters"


async def key(ts: BrowserToolset, tab: Tab, inp: KeyInput) -> str:
    pressed = actions.chords(inp.text)
    for _ in range(inp.repeat or 1):
        for chord in pressed:
            try:
                await tab.input.press(chord)
            except ActionError as exc:
                raise MemberError("text", str(exc)) from None
    times = f" {inp.repeat} times" if (inp.repeat or 1) > 1 else ""
    return f"pressed {inp.text}{times}"


async def hold_key(ts: BrowserToolset, tab: Tab, inp: HoldKeyInput) -> str:
    pressed = actions.chords(inp.text)
    if len(pressed) != 1:
        raise MemberError("text", "hold one key or chord (no spaces)")
    try:
        await tab.input.press(pressed[0], hold=inp.duration)
    except ActionError as exc:
        raise MemberError("text", str(exc)) from None
    return f"held {inp.text} for {inp.duration:g} s"


async def wait(ts: BrowserToolset, tab: Tab, inp: WaitInput) -> str:
    await asyncio.sleep(inp.duration)
    return f"waited {inp.duration:g} s"
