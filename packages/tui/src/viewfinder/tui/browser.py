"""The environment's browser: a CDP connection, one page, and a capture backend for it."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from viewfinder.cdp import (
    CDPConnection,
    CDPSession,
    ChromiumProcess,
    connect,
    launch_chromium,
)
from viewfinder.cdp.connection import DEFAULT_CALL_TIMEOUT
from viewfinder.cdp.screenshot import capture_screenshot
from viewfinder.core import CaptureBackend, CaptureNotSupportedError, Region, Screenshot
from viewfinder.core.imaging import DEFAULT_QUALITY, ImageFormat, image_size

log = logging.getLogger(__name__)

#: Starts a local Chromium: ``launcher(width=, height=, timeout=) -> ChromiumProcess``.
ChromiumLauncher = Callable[..., ChromiumProcess]


class BrowserPageBackend(CaptureBackend):
    """Captures the environment's page (the tab it opened), not a fresh one.

    Goes through :class:`~viewfinder.core.CaptureBackend`, so every shot passes the
    ``viewfinder_screenshot_captured`` hook like any other capture. Use :meth:`acapture`
    on the environment's loop; :meth:`capture` works from other threads only.
    """

    name = "cdp"
    priority = -1

    def __init__(self, page: CDPSession, loop: asyncio.AbstractEventLoop) -> None:
        self.page = page
        self._loop = loop

    async def _acapture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        if window is not None:
            raise CaptureNotSupportedError("a browser page has no windows; capture a region")
        params: dict[str, Any] = {"format": format}
        if format != "png":
            params["quality"] = quality or DEFAULT_QUALITY
        if region is not None:
            region.check_within(*self.screen_size())
            params["clip"] = {**region.model_dump(), "scale": 1}
        result = await self._screenshot(params)
        data = base64.b64decode(result["data"])
        width, height = image_size(data)
        return Screenshot(
            data=data, format=format, width=width, height=height, source=self.name, region=region
        )

    async def _screenshot(self, params: dict[str, Any]) -> dict[str, Any]:
        return await capture_screenshot(self.page, params, timeout=DEFAULT_CALL_TIMEOUT)

    def _capture(
        self, *, region: Region | None, window: int | None, format: ImageFormat, quality: int | None
    ) -> Screenshot:
        with contextlib.suppress(RuntimeError):
            if asyncio.get_running_loop() is self._loop:
                raise CaptureNotSupportedError(
                    "capture() would block the event loop the page runs on; await acapture()"
                )
        future = asyncio.run_coroutine_threadsafe(
            self._acapture(region=region, window=window, format=format, quality=quality),
            self._loop,
        )
        return future.result()

    def screen_size(self) -> tuple[int, int]:
        return self.page.viewport or (1280, 800)


class EnvironmentBrowser:
    """A browser driven over CDP: the :attr:`connection`, one :attr:`page` and its URL.

    ``endpoint`` is where the browser was found (its DevTools URL); ``process`` is the
    Chromium this environment launched, or None for a browser it attached to, which
    :meth:`close` leaves running (only the tab opened here is closed).
    """

    def __init__(
        self,
        connection: CDPConnection,
        page: CDPSession,
        *,
        endpoint: str,
        process: ChromiumProcess | None = None,
    ) -> None:
        self.connection = connection
        self.page = page
        self.endpoint = endpoint
        self.process = process
        self.url = "about:blank"
        self.backend = BrowserPageBackend(page, asyncio.get_running_loop())
        self._navigations = page.on("Page.frameNavigated", self._on_navigated)

    def _on_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame") or {}
        if not frame.get("parentId"):  # the main frame, not an iframe
            self.url = str(frame.get("url", self.url))

    @property
    def launched(self) -> bool:
        """True when this environment started the browser (and stops it)."""
        return self.process is not None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def ready(self) -> bool:
        """True while the CDP connection is open."""
        return not self.connection.closed

    async def navigate(self, url: str) -> None:
        """Load ``url`` in the page and wait for it."""
        await self.page.navigate(url)
        self.url = url

    async def capture(self, format: str = "png") -> Screenshot:
        """A screenshot of the page's viewport."""
        return await self.backend.acapture(format=format, context={"origin": "tui"})

    async def close(self) -> None:
        """Close the page and the connection; stop the browser if it was launched here."""
        self._navigations.remove()
        try:
            if not self.connection.closed:
                with contextlib.suppress(Exception):  # the browser may be gone already
                    await self.page.close(timeout=5)
            await self.connection.close()
        finally:
            if self.process is not None:
                await asyncio.to_thread(self.process.stop)

    def __repr__(self) -> str:
        how = f"launched pid {self.pid}" if self.launched else "attached"
        return f"EnvironmentBrowser({self.endpoint!r}, {how}, url={self.url!r})"


async def launch_browser(
    *,
    width: int,
    height: int,
    timeout: float,
    launcher: ChromiumLauncher = launch_chromium,
) -> EnvironmentBrowser:
    """Launch a local headless Chromium and open a ``width`` x ``height`` page in it."""
    process = await asyncio.to_thread(launcher, width=width, height=height, timeout=timeout)
    try:
        return await _open(process.ws_url, process.http_url, width, height, timeout, process)
    except BaseException:
        await asyncio.to_thread(process.stop)
        raise


async def attach_browser(
    url: str, *, width: int, height: int, timeout: float
) -> EnvironmentBrowser:
    """Attach to the browser at ``url`` (``ws://`` or ``http://``) and open a page in it."""
    return await _open(url, url, width, height, timeout, None)


async def _open(
    target: str,
    endpoint: str,
    width: int,
    height: int,
    timeout: float,
    process: ChromiumProcess | None,
) -> EnvironmentBrowser:
    connection = await connect(target, timeout=timeout)
    try:
        page = await connection.new_page("about:blank", width, height, timeout=timeout)
    except BaseException:
        await connection.close()
        raise
    return EnvironmentBrowser(connection, page, endpoint=endpoint, process=process)
