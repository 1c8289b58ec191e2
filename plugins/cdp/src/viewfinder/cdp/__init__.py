"""viewfinder.cdp: a CDP client over websockets, a Chromium launcher and page capture.

>>> from viewfinder.cdp import CdpBackend
>>> with CdpBackend(url="https://example.org") as backend:     # doctest: +SKIP
...     shot = backend.capture()

>>> from viewfinder.cdp import connect, launch_chromium
>>> async def title():                                          # doctest: +SKIP
...     with launch_chromium() as browser:
...         async with await connect(browser.http_url) as connection:
...             page = await connection.new_page("https://example.org")
...             return await page.evaluate("document.title")
"""

from viewfinder.cdp.backend import CdpBackend
from viewfinder.cdp.connection import CDPConnection
from viewfinder.cdp.endpoint import CDP_URL_ENV, browser_ws_url, connect, resolve_cdp_url
from viewfinder.cdp.errors import (
    CDPConnectError,
    CDPConnectionClosedError,
    CDPError,
    CDPNavigationError,
    CDPTimeoutError,
    ChromiumLaunchError,
    JavaScriptError,
)
from viewfinder.cdp.launcher import CHROMIUM_ENV, ChromiumProcess, find_chromium, launch_chromium
from viewfinder.cdp.listeners import Subscription
from viewfinder.cdp.loop import LoopThread
from viewfinder.cdp.page_input import PageInput
from viewfinder.cdp.session import CDPSession

__all__ = [
    "CDP_URL_ENV",
    "CHROMIUM_ENV",
    "CDPConnectError",
    "CDPConnection",
    "CDPConnectionClosedError",
    "CDPError",
    "CDPNavigationError",
    "CDPSession",
    "CDPTimeoutError",
    "CdpBackend",
    "ChromiumLaunchError",
    "ChromiumProcess",
    "JavaScriptError",
    "LoopThread",
    "PageInput",
    "Subscription",
    "browser_ws_url",
    "connect",
    "find_chromium",
    "launch_chromium",
    "resolve_cdp_url",
]
