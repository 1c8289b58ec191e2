"""Names of viewfinder.cdp, imported on first use (see __init__.py)."""

from .backend import CdpBackend
from .connection import CDPConnection
from .endpoint import CDP_URL_ENV, browser_ws_url, connect, resolve_cdp_url
from .errors import (
    CDPConnectError,
    CDPConnectionClosedError,
    CDPError,
    CDPNavigationError,
    CDPTimeoutError,
    ChromiumLaunchError,
    JavaScriptError,
)
from .launcher import CHROMIUM_ENV, ChromiumProcess, find_chromium, launch_chromium
from .listeners import Subscription
from .loop import LoopThread
from .page_input import PageInput
from .session import CDPSession

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
