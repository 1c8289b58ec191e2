"""The ``cdp`` capture backend: screenshots of, and input to, a page in Chromium."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from viewfinder.cdp.connection import DEFAULT_CALL_TIMEOUT, CDPConnection
from viewfinder.cdp.endpoint import CDP_URL_ENV, connect, resolve_cdp_url
from viewfinder.cdp.errors import CDPError
from viewfinder.cdp.launcher import ChromiumProcess, find_chromium, launch_chromium
from viewfinder.cdp.loop import LoopThread
from viewfinder.cdp.page_input import PageInput
from viewfinder.cdp.screenshot import capture_screenshot
from viewfinder.cdp.session import CDPSession
from viewfinder.core import (
    Availability,
    CaptureBackend,
    CaptureNotSupportedError,
    DependencyMissingError,
    Event,
    Region,
    Screenshot,
)
from viewfinder.core.imaging import DEFAULT_QUALITY, ImageFormat, image_size

T = TypeVar("T")


class CdpBackend(CaptureBackend):
    """Capture a page in Chromium through the Chrome DevTools Protocol.

    ``url`` is the page to open (default ``about:blank``). ``cdp_url`` attaches to a
    browser that is already running (``http://127.0.0.1:9222`` or a ``ws://`` URL;
    default ``$VIEWFINDER_CDP_URL``); without one a headless Chromium is launched. The
    page gets a ``width`` x ``height`` viewport; ``full_page`` captures the whole
    document instead of the viewport (and a region is then a part of the document).
    With ``shown_page`` and a ``cdp_url`` but no ``url``, the backend attaches to the
    page that browser shows (its active tab) instead of opening one, and leaves it open.
    Nothing starts until the first capture or action (or :meth:`start`); :meth:`close`
    closes the page it opened and stops a launched browser. If the browser dies, the next use
    connects (or launches) afresh.

    The client runs on a private event loop thread owned by the backend, so
    :meth:`capture` works from plain sync code and :meth:`acapture` from any loop. The
    :attr:`connection` and :attr:`session` belong to that loop: drive them with
    :meth:`run` (sync) or :meth:`arun` (async), and expect their listeners to run there.
    """

    name = "cdp"
    # never picked by itself: a page is captured only when asked for (by name or URL)
    priority = -1
    supports_act = True

    def __init__(
        self,
        url: str | None = None,
        cdp_url: str | None = None,
        width: int = 1280,
        height: int = 800,
        full_page: bool = False,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT,
        shown_page: bool = False,
    ) -> None:
        self.shown_page = shown_page and url is None
        self.url = url or "about:blank"
        self.cdp_url = resolve_cdp_url(cdp_url)
        self.width = width
        self.height = height
        self.full_page = full_page
        self.timeout = timeout
        self.browser: ChromiumProcess | None = None
        self._connection: CDPConnection | None = None
        self._session: CDPSession | None = None
        self._input: PageInput | None = None
        self._loop: LoopThread | None = None
        self._loop_lock = threading.Lock()
        self._start_lock: asyncio.Lock | None = None

    @classmethod
    def availability(cls, cdp_url: str | None = None, **_: Any) -> Availability:
        """Yes when attaching (``cdp_url`` or ``$VIEWFINDER_CDP_URL``) or Chromium is installed.

        Whether the browser at a CDP URL answers is only known on connecting.
        """
        cdp_url = resolve_cdp_url(cdp_url)
        if cdp_url:
            return Availability.yes(f"attaches to the browser at {cdp_url} (${CDP_URL_ENV})")
        try:
            return Availability.yes(f"launches {find_chromium()}")
        except DependencyMissingError as exc:
            return Availability.no(f"{exc} Or set ${CDP_URL_ENV} to a running browser.")

    # -- the private loop ------------------------------------------------------------

    def _loop_thread(self) -> LoopThread:
        with self._loop_lock:
            if self._loop is None or not self._loop.running:
                self._loop = LoopThread(name=f"viewfinder-cdp-{id(self):x}")
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the backend's loop and wait for it (from sync code)."""
        return self._loop_thread().run(coro)

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the backend's loop (from any event loop)."""
        return await self._loop_thread().arun(coro)

    # -- starting -------------------------------------------------------------------

    def start(self) -> CDPSession:
        """Connect (launching Chromium unless attaching) and open the page; idempotent."""
        return self.run(self._ensure_started())

    async def astart(self) -> CDPSession:
        """Async :meth:`start`."""
        return await self.arun(self._ensure_started())

    @property
    def session(self) -> CDPSession:
        """The page's :class:`CDPSession`, starting the backend when needed."""
        if self._session is not None and not self._connection_lost():
            return self._session
        return self.start()

    @property
    def connection(self) -> CDPConnection:
        """The browser :class:`CDPConnection`, starting the backend when needed."""
        if self._connection is None:
            self.start()
        assert self._connection is not None
        return self._connection

    async def _ensure_started(self) -> CDPSession:
        # Runs on the backend's loop; the lock makes concurrent first captures start once.
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._session is not None and not self._connection_lost():
                return self._session
            await self._shutdown()  # a browser that died is replaced, not reused
            if self.cdp_url is None:
                self.browser = await asyncio.to_thread(
                    launch_chromium, width=self.width, height=self.height, timeout=self.timeout
                )
            try:
                target = self.cdp_url or (self.browser.ws_url if self.browser else "")
                self._connection = await connect(target, timeout=self.timeout)
                if self.shown_page and self.cdp_url is not None:
                    page = await shown_page(self._connection, timeout=self.timeout)
                    self._session = await CDPSession.attach(
                        self._connection, page, timeout=self.timeout
                    )
                else:
                    self._session = await self._connection.new_page(
                        self.url, self.width, self.height, timeout=self.timeout
                    )
            except BaseException:
                await self._shutdown()
                raise
            self._input = PageInput(self._session)
            return self._session

    def _connection_lost(self) -> bool:
        return self._connection is None or self._connection.closed

    # -- capture --------------------------------------------------------------------

    def _capture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        return self.run(self._grab(region, window, format, quality))

    async def _acapture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        return await self.arun(self._grab(region, window, format, quality))

    async def _grab(
        self, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        if window is not None:
            raise CaptureNotSupportedError(
                "the cdp backend captures a page, not windows; pass a region of the page"
            )
        session = await self._ensure_started()
        params: dict[str, Any] = {"format": format}
        if format != "png":
            params["quality"] = quality or DEFAULT_QUALITY
        if self.full_page:
            # The whole document: Chromium renders past the viewport for this one shot.
            page_width, page_height = await session.layout_size(timeout=self.timeout)
            area = region or Region(x=0, y=0, width=page_width, height=page_height)
            area.check_within(page_width, page_height)
            params["captureBeyondViewport"] = True
            params["clip"] = _clip(area)
        elif region is not None:
            region.check_within(self.width, self.height)
            # A clip is in document coordinates; our regions are in the viewport's.
            offset = await session.scroll_offset(timeout=self.timeout)
            params["clip"] = _clip(region, offset)
        result = await capture_screenshot(session, params, timeout=self.timeout)
        data = base64.b64decode(result["data"])
        width, height = image_size(data)
        return Screenshot(
            data=data,
            format=format,
            width=width,
            height=height,
            source=self.name,
            region=region,
        )

    def screen_size(self) -> tuple[int, int]:
        """The viewport size; the browser need not be running."""
        return (self.width, self.height)

    # -- input ----------------------------------------------------------------------

    def act(self, event: Event) -> None:
        """Perform ``event`` on the page (clicks, keys, typing, scrolling, waiting)."""
        self.run(self._act(event))

    async def aact(self, event: Event) -> None:
        """Async :meth:`act`."""
        await self.arun(self._act(event))

    async def _act(self, event: Event) -> None:
        await self._ensure_started()
        assert self._input is not None
        await self._input.perform(event)

    # -- lifetime -------------------------------------------------------------------

    async def _shutdown(self) -> None:
        session, connection, browser = self._session, self._connection, self.browser
        self._session = self._connection = self._input = None
        self.browser = None
        try:
            if session is not None and not session.closed and connection is not None:
                # The page or the browser may already be gone; we are leaving anyway.
                with contextlib.suppress(Exception):
                    await session.close(timeout=5)
            if connection is not None:
                await connection.close()
        finally:
            if browser is not None:
                await asyncio.to_thread(browser.stop)

    def close(self) -> None:
        """Close the page, disconnect, stop a launched browser and the loop thread.

        An attached browser keeps running. The backend starts afresh if used again.
        """
        with self._loop_lock:
            loop, self._loop = self._loop, None
        if loop is None:
            return
        try:
            if loop.running:
                loop.run(self._shutdown())
        finally:
            self._start_lock = None
            loop.stop()
            if self.browser is not None:  # the loop died before it could stop the browser
                self.browser.stop()
                self.browser = None

    def __repr__(self) -> str:
        where = self.cdp_url or ("launched " + self.browser.ws_url if self.browser else "idle")
        return f"CdpBackend(url={self.url!r}, {where}, {self.width}x{self.height})"


async def shown_page(connection: CDPConnection, *, timeout: float = DEFAULT_CALL_TIMEOUT) -> str:
    """The target id of the page a browser shows: its most recently active tab.

    Chromium lists its targets most recently active first; a tab in the background
    (``document.visibilityState`` not ``"visible"``) is passed over while a shown one
    exists. Raises :class:`CDPError` when the browser has no page open.
    """
    infos = (await connection.call("Target.getTargets", timeout=timeout))["targetInfos"]
    pages = [
        info["targetId"]
        for info in infos
        if info.get("type") == "page"
        and not str(info.get("url", "")).startswith(("devtools://", "chrome-extension://"))
    ]
    if not pages:
        raise CDPError(
            "the browser has no page open; open one, or pass url=... (`--url`) to open it"
        )
    for target_id in pages:
        shown = await _visible(connection, target_id, timeout)
        if shown:
            return target_id
    return pages[0]


async def _visible(connection: CDPConnection, target_id: str, timeout: float) -> bool:
    session = await CDPSession.attach(connection, target_id, timeout=timeout)
    try:
        return bool(await session.evaluate("document.visibilityState === 'visible'"))
    except CDPError:
        return False
    finally:
        with contextlib.suppress(CDPError):
            await session.close(timeout=timeout)


def _clip(region: Region, offset: tuple[float, float] = (0.0, 0.0)) -> dict[str, float]:
    return {
        "x": region.x + offset[0],
        "y": region.y + offset[1],
        "width": region.width,
        "height": region.height,
        "scale": 1,
    }
