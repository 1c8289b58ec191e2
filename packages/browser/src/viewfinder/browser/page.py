"""``page``: the few helpers a snippet needs most, over its session.

Everything here is plain CDP through the snippet's session view, so screenshots taken
with :meth:`Page.screenshot` are collected like any other ``Page.captureScreenshot``,
and after the call the helpers stop working with the view.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from viewfinder.browser.collector import ScreenshotCollector, screenshot_from_result
from viewfinder.browser.errors import ElementNotFoundError
from viewfinder.browser.tab import DialogChoice
from viewfinder.browser.view import CAPTURE_METHOD, SnippetSession
from viewfinder.cdp import CDPTimeoutError, PageInput
from viewfinder.cdp.connection import DEFAULT_CALL_TIMEOUT
from viewfinder.core import Point, Region, Screenshot
from viewfinder.core.imaging import DEFAULT_QUALITY, normalize_format

# Scrolls the element into view and answers the centre of its box, or null.
_LOCATE = """(() => {
  const element = document.querySelector(%s);
  if (!element) return null;
  element.scrollIntoView({block: "center", inline: "center"});
  const box = element.getBoundingClientRect();
  return {x: box.left + box.width / 2, y: box.top + box.height / 2};
})()"""
_FOCUS = """(() => {
  const element = document.querySelector(%s);
  if (!element) return false;
  element.focus();
  return true;
})()"""


class Page:
    """Helpers over ``session`` (a :class:`SnippetSession`): goto, evaluate, click, type,
    press, wait_for, title, url and screenshot. Coordinates are viewport CSS pixels,
    which are screenshot pixels."""

    def __init__(
        self,
        session: SnippetSession,
        collector: ScreenshotCollector,
        *,
        choose_dialogs: Callable[[DialogChoice], None] | None = None,
        switch: Callable[[str | None, float], Awaitable[SnippetSession]] | None = None,
        list_pages: Callable[[], Awaitable[list[dict[str, Any]]]] | None = None,
    ) -> None:
        self.session = session
        self._collector = collector
        self._input = PageInput(session)
        self._choose_dialogs = choose_dialogs
        self._switch = switch
        self._list_pages = list_pages

    async def pages(self) -> list[dict[str, Any]]:
        """The browser's pages: ``id``, ``url``, ``title``, ``opener`` (the id of the page
        that opened it, for a popup or a new tab) and ``current`` (this one)."""
        self.session.check_open("list pages")
        if self._list_pages is None:
            raise NotImplementedError("this page cannot list the browser's pages")
        return await self._list_pages()

    async def switch_to(
        self, which: str | None = None, *, timeout: float = DEFAULT_CALL_TIMEOUT
    ) -> None:
        """Work on another page from now on, in this call and the next ones: ``which`` is
        a page id (see :meth:`pages`) or text found in a page's URL or title; left out,
        the newest page this one opened (a popup, a link with ``target=_blank``).

        ``page`` and ``page.session`` follow the switch; ``session`` stays on the page
        the call started on. Raises ``PageNotFoundError`` (listing the pages) when
        nothing matches.
        """
        self.session.check_open("switch pages")
        if self._switch is None:
            raise NotImplementedError("this page cannot switch to another")
        view = await self._switch(which, timeout)
        self.session = view
        self._input = PageInput(view)

    def on_dialog(self, choice: DialogChoice) -> None:
        """Choose how ``alert``/``confirm``/``prompt``/``beforeunload`` dialogs are answered
        for the rest of this call (by default every one is accepted).

        ``choice`` is True (accept), False (dismiss), a string (accept; a prompt gets it
        as its answer), None (back to the default), or a function (sync or async) of a
        :class:`Dialog` (``type``, ``message``, ``default_prompt``, ``url``) returning
        one of those. Every dialog and its answer is reported in the call's output.
        """
        self.session.check_open("choose how dialogs are answered")
        if not (choice is None or isinstance(choice, bool | str) or callable(choice)):
            raise TypeError(
                "on_dialog takes True, False, a string, None or a function of the dialog, "
                f"not {type(choice).__name__}"
            )
        if self._choose_dialogs is not None:
            self._choose_dialogs(choice)

    async def goto(self, url: str, *, timeout: float = DEFAULT_CALL_TIMEOUT) -> None:
        """Load ``url`` and wait for its ``load`` event."""
        await self.session.navigate(url, timeout=timeout)

    async def evaluate(
        self, expression: str, *, await_promise: bool = True, timeout: float = DEFAULT_CALL_TIMEOUT
    ) -> Any:
        """Run JavaScript ``expression`` and return its value as JSON data (a returned
        promise is awaited). A thrown exception raises ``JavaScriptError``."""
        return await self.session.evaluate(expression, await_promise=await_promise, timeout=timeout)

    async def title(self) -> str:
        return str(await self.evaluate("document.title"))

    async def url(self) -> str:
        return str(await self.evaluate("location.href"))

    async def click(
        self,
        selector: str | None = None,
        *,
        x: int | None = None,
        y: int | None = None,
        button: str = "left",
        count: int = 1,
    ) -> None:
        """Click the element matching CSS ``selector`` (scrolled into view, at its
        centre), or the point ``(x, y)``."""
        if selector is not None:
            at = await self._locate(selector)
        elif x is not None and y is not None:
            at = Point(x=x, y=y)
        else:
            raise TypeError("click() needs a CSS selector or both x= and y=")
        await self._input.click(at, button=button, count=count)

    async def type(self, text: str, selector: str | None = None) -> None:
        """Type ``text`` into the element matching ``selector`` (focused first), or into
        whatever has the focus; each newline presses Enter."""
        if selector is not None:
            found = await self.evaluate(_FOCUS % json.dumps(selector))
            if not found:
                raise ElementNotFoundError(f"no element matches {selector!r} on the page")
        await self._input.type(text)

    async def press(self, *keys: str) -> None:
        """Press a key or a chord: ``press("Enter")``, ``press("ctrl", "a")``."""
        await self._input.press(list(keys))

    async def wait_for(
        self, expression: str, *, timeout: float = 10.0, interval: float = 0.1
    ) -> Any:
        """Poll JavaScript ``expression`` until it is truthy and return its value.

        Raises ``CDPTimeoutError`` after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            value = await self.evaluate(expression, timeout=max(timeout, 1.0))
            if value:
                return value
            if time.monotonic() >= deadline:
                raise CDPTimeoutError(f"{expression!r} to become true", timeout)
            await asyncio.sleep(interval)

    async def screenshot(
        self,
        format: str = "png",
        *,
        quality: int | None = None,
        full_page: bool = False,
        region: Region | None = None,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> Screenshot:
        """Capture the viewport (or the whole document with ``full_page``, or ``region``
        of it) as png, jpeg or webp; the screenshot is attached to the call's result."""
        fmt = normalize_format(format)
        params: dict[str, Any] = {"format": fmt}
        if fmt != "png":
            params["quality"] = quality or DEFAULT_QUALITY
        if full_page:
            width, height = await self.session.layout_size(timeout=timeout)
            area = region or Region(x=0, y=0, width=width, height=height)
            params["captureBeyondViewport"] = True
            params["clip"] = _clip(area, (0.0, 0.0))
        elif region is not None:
            # A clip is in document coordinates; a region here is in the viewport's.
            params["clip"] = _clip(region, await self.session.scroll_offset(timeout=timeout))
        result = await self.session.call(CAPTURE_METHOD, params, timeout=timeout)
        return self._collector.screenshot_for(result) or screenshot_from_result(params, result)

    async def _locate(self, selector: str) -> Point:
        found = await self.evaluate(_LOCATE % json.dumps(selector))
        if not found:
            raise ElementNotFoundError(f"no element matches {selector!r} on the page")
        return Point(x=round(found["x"]), y=round(found["y"]))


def _clip(region: Region, offset: tuple[float, float]) -> dict[str, float]:
    return {
        "x": region.x + offset[0],
        "y": region.y + offset[1],
        "width": region.width,
        "height": region.height,
        "scale": 1,
    }
