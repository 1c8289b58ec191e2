"""``BrowserSession``: a page that persists across ``browser_execute`` calls.

A session keeps its page (cookies, DOM, scroll position) and a ``state`` dict between
calls. Each call runs its snippet on the session's own event loop thread and waits
for it from the caller's thread (:meth:`BrowserSession.execute`) or event loop
(:meth:`BrowserSession.aexecute`). The wait also watches the loop: a snippet that
blocks it past its deadline cannot be cancelled, so the session gives up on that loop
and its page, reports a timeout, and starts afresh on the next call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
from pathlib import Path
from typing import Any

from viewfinder.browser.browser import Browser
from viewfinder.browser.errors import BrowserError, BrowserInputError, InvalidTimeoutError
from viewfinder.browser.execution import Execution
from viewfinder.browser.result import ExecuteResult
from viewfinder.browser.tab import Tab, TabAbandonedError

#: Timeout bounds of one call, in seconds.
MIN_TIMEOUT = 1.0
MAX_TIMEOUT = 600.0
DEFAULT_TIMEOUT = 60.0
#: How often the waiting side looks at a running call.
WATCH_INTERVAL = 0.2
#: How far past its deadline a call may be before its loop counts as blocked. The loop
#: handles a deadline within milliseconds; this leaves room for a loaded machine.
BLOCKED_GRACE = 2.0

_WAIT = object()
_RESUBMIT = object()


def check_timeout(timeout: Any) -> float:
    """``timeout`` as seconds, or :class:`InvalidTimeoutError` when it is not 1..600."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT
    ):
        raise InvalidTimeoutError(
            f"timeout must be a number of seconds from {MIN_TIMEOUT:g} to {MAX_TIMEOUT:g}, "
            f"got {timeout!r}; leave it out for the default of {DEFAULT_TIMEOUT:g}"
        )
    return float(timeout)


class BrowserSession:
    """A page in a browser that snippets drive, call after call.

    ``browser`` is shared with other sessions (see :class:`BrowserSessions`); without
    one, the session makes its own from ``cdp_url`` (attach: ``ws://...``,
    ``http://host:port``, default ``$VIEWFINDER_CDP_URL``) or launches a local headless
    Chromium, and stops it on :meth:`close`. The page opens at ``url`` with a
    ``width`` x ``height`` viewport on the first call. ``screenshot_dir`` (default
    ``$VIEWFINDER_SCREENSHOT_DIR``) receives a copy of every screenshot.

    Each session works in a window of its own, closed with the session. With
    ``keep_page`` it works instead on the page the last such session on this browser
    left (same target, same DOM; in any process: see :mod:`viewfinder.browser.pages`),
    loads ``url`` there only when one is given, and leaves the page open on close:
    that is how ``viewfinder browser exec`` calls continue one another.
    """

    def __init__(
        self,
        session_id: str = "default",
        *,
        browser: Browser | None = None,
        cdp_url: str | None = None,
        url: str | None = None,
        width: int = 1280,
        height: int = 800,
        screenshot_dir: str | Path | None = None,
        keep_page: bool = False,
    ) -> None:
        if browser is not None and cdp_url is not None:
            raise BrowserInputError("give either a browser or a cdp_url, not both")
        self.session_id = session_id
        self.browser = browser or Browser(cdp_url, width=width, height=height)
        self._owns_browser = browser is None
        #: The page's first URL (None: about:blank, or where a kept page already is).
        self.url = url
        self.keep_page = keep_page
        self.width = width
        self.height = height
        self.screenshot_dir = screenshot_dir
        #: A dict snippets see as ``state``; it lives as long as the session.
        self.state: dict[str, Any] = {}
        self._tab: Tab | None = None
        self._stale_targets: list[str] = []
        self._tab_lock = threading.Lock()
        self._closed = False

    # -- calls ------------------------------------------------------------------------

    def execute(
        self, code: str, timeout: float = DEFAULT_TIMEOUT, description: str | None = None
    ) -> ExecuteResult:
        """Run ``code`` (async Python with ``session``, ``page`` and ``state`` in scope)
        and return its output, return value and screenshots.

        A syntax error, an exception or a timeout in the snippet comes back as an error
        result. Raises :class:`InvalidTimeoutError` for a timeout outside 1..600 s and
        the CDP client's errors when no browser can be reached or launched.
        """
        execution = self._execution(code, timeout, description)
        while True:
            tab = self._current_tab()
            future = tab.submit(execution.run(tab))
            verdict: Any = _WAIT
            try:
                while verdict is _WAIT:
                    concurrent.futures.wait([future], timeout=WATCH_INTERVAL)
                    verdict = self._judge(tab, execution, future)
            except BaseException:
                future.cancel()  # Ctrl-C while waiting: stop the snippet too
                raise
            if verdict is not _RESUBMIT:
                return verdict

    async def aexecute(
        self, code: str, timeout: float = DEFAULT_TIMEOUT, description: str | None = None
    ) -> ExecuteResult:
        """:meth:`execute` for async callers, from any event loop; cancelling it cancels
        the snippet."""
        execution = self._execution(code, timeout, description)
        while True:
            tab = self._current_tab()
            future = tab.submit(execution.run(tab))
            waiter = asyncio.wrap_future(future)
            verdict: Any = _WAIT
            try:
                while verdict is _WAIT:
                    await asyncio.wait({waiter}, timeout=WATCH_INTERVAL)
                    if future.done() and not waiter.done():
                        continue  # the outcome is on its way to this loop's copy
                    verdict = self._judge(tab, execution, future)
            except BaseException:
                future.cancel()
                raise
            finally:
                # The outcome was read from ``future``; mark the loop's copy as read too,
                # or asyncio reports an exception there as never retrieved.
                if waiter.done() and not waiter.cancelled():
                    waiter.exception()
            if verdict is not _RESUBMIT:
                return verdict

    def _execution(self, code: str, timeout: Any, description: str | None) -> Execution:
        if not isinstance(code, str):
            raise BrowserInputError(
                f"code must be a string of Python source, got {type(code).__name__}"
            )
        return Execution(
            session_id=self.session_id,
            code=code,
            timeout=check_timeout(timeout),
            description=description,
            screenshot_dir=self.screenshot_dir,
            state=self.state,
        )

    def _judge(
        self, tab: Tab, execution: Execution, future: concurrent.futures.Future[ExecuteResult]
    ) -> Any:
        """The result when there is one, ``_RESUBMIT`` to run on a new tab, else ``_WAIT``."""
        if future.done() and not future.cancelled():
            try:
                return future.result()
            except TabAbandonedError:
                return _RESUBMIT
        if execution.overran(BLOCKED_GRACE):
            self._abandon(tab)
            execution.close_views("its snippet blocked the event loop past its timeout")
            future.cancel()
            return execution.blocked_result()
        if tab.abandoned and execution.deadline is None:
            future.cancel()  # queued behind a blocked call: run on the new tab instead
            return _RESUBMIT
        return _WAIT

    # -- the tab --------------------------------------------------------------------------

    def _current_tab(self) -> Tab:
        with self._tab_lock:
            if self._closed:
                raise BrowserError(f"browser session {self.session_id!r} is closed; open a new one")
            if self._tab is None:
                self._tab = Tab(
                    self.browser,
                    url=self.url,
                    width=self.width,
                    height=self.height,
                    name=self.session_id[:20],
                    stale_targets=self._stale_targets,
                    keep_page=self.keep_page,
                )
                self._stale_targets = []
            return self._tab

    def _abandon(self, tab: Tab) -> None:
        with self._tab_lock:
            if self._tab is tab:
                self._tab = None
            self._stale_targets.extend(tab.owned_target_ids)
        tab.abandon()

    # -- lifetime -------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close the page and the connection, and stop a browser this session launched.

        Idempotent. A browser shared through :class:`BrowserSessions` is left running.
        """
        with self._tab_lock:
            self._closed = True
            tab, self._tab = self._tab, None
        if tab is not None:
            tab.close()
        if self._owns_browser:
            self.browser.stop()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the caller's event loop."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> BrowserSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> BrowserSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"BrowserSession({self.session_id!r}, {self.browser!r})"
