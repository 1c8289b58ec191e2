"""Browser sessions by id, sharing one browser, and the module-level ``browser_execute``.

An agent framework usually holds one :class:`BrowserSessions` and passes each
conversation's id; every id gets its own page (and its own event loop thread and
connection) in the one shared browser, which persists across calls until closed.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path

from viewfinder.browser.browser import Browser
from viewfinder.browser.result import ExecuteResult
from viewfinder.browser.session import DEFAULT_TIMEOUT, BrowserSession


class BrowserSessions:
    """Persistent :class:`BrowserSession` objects by session id, in one browser.

    ``browser`` defaults to one made from ``cdp_url`` (or ``$VIEWFINDER_CDP_URL``), else
    a local Chromium launched on first use; :meth:`close` stops a browser it made. The
    other arguments are every session's page settings.
    """

    def __init__(
        self,
        browser: Browser | None = None,
        *,
        cdp_url: str | None = None,
        url: str | None = None,
        width: int = 1280,
        height: int = 800,
        screenshot_dir: str | Path | None = None,
    ) -> None:
        self.browser = browser or Browser(cdp_url, width=width, height=height)
        self._owns_browser = browser is None
        self.url = url
        self.width = width
        self.height = height
        self.screenshot_dir = screenshot_dir
        self._sessions: dict[str, BrowserSession] = {}
        self._lock = threading.Lock()

    def get(self, session_id: str = "default") -> BrowserSession:
        """The session for ``session_id``, created on first use."""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or session.closed:
                session = BrowserSession(
                    session_id,
                    browser=self.browser,
                    url=self.url,
                    width=self.width,
                    height=self.height,
                    screenshot_dir=self.screenshot_dir,
                )
                self._sessions[session_id] = session
            return session

    def ids(self) -> list[str]:
        with self._lock:
            return sorted(self._sessions)

    def execute(
        self,
        code: str,
        timeout: float = DEFAULT_TIMEOUT,
        description: str | None = None,
        *,
        session_id: str = "default",
    ) -> ExecuteResult:
        """Run ``code`` in the session ``session_id``; see :meth:`BrowserSession.execute`."""
        return self.get(session_id).execute(code, timeout, description)

    async def aexecute(
        self,
        code: str,
        timeout: float = DEFAULT_TIMEOUT,
        description: str | None = None,
        *,
        session_id: str = "default",
    ) -> ExecuteResult:
        """Async :meth:`execute`."""
        return await self.get(session_id).aexecute(code, timeout, description)

    def close_session(self, session_id: str) -> None:
        """Close one session's page; the next call with that id opens a new one."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is not None:
            session.close()

    def close(self) -> None:
        """Close every session, and stop the browser when it was made here."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close()
        if self._owns_browser:
            self.browser.stop()

    def __enter__(self) -> BrowserSessions:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


_default: BrowserSessions | None = None
_default_lock = threading.Lock()


def default_sessions() -> BrowserSessions:
    """The process-wide sessions ``browser_execute`` uses, made on first use (attached to
    ``$VIEWFINDER_CDP_URL`` or launching Chromium) and closed at interpreter exit."""
    global _default
    with _default_lock:
        if _default is None:
            _default = BrowserSessions()
            atexit.register(_default.close)
        return _default


def close_default_sessions() -> None:
    """Close the sessions ``browser_execute`` uses (and a browser they launched); the
    next call makes new ones, reading ``$VIEWFINDER_CDP_URL`` again."""
    global _default
    with _default_lock:
        sessions, _default = _default, None
    if sessions is not None:
        atexit.unregister(sessions.close)
        sessions.close()


def browser_execute(
    code: str,
    timeout: float = DEFAULT_TIMEOUT,
    description: str | None = None,
    *,
    session_id: str = "default",
) -> ExecuteResult:
    """Run an async Python snippet against the page of ``session_id`` and return its
    output, return value and every screenshot it took as image attachments.

    ``session`` (the page's CDP session), ``page`` (goto, evaluate, click, type, press,
    wait_for, title, url, screenshot) and ``state`` (a dict kept between calls) are in
    scope. ``timeout`` is 1..600 seconds.
    """
    return default_sessions().execute(code, timeout, description, session_id=session_id)


async def abrowser_execute(
    code: str,
    timeout: float = DEFAULT_TIMEOUT,
    description: str | None = None,
    *,
    session_id: str = "default",
) -> ExecuteResult:
    """Async :func:`browser_execute`."""
    return await default_sessions().aexecute(code, timeout, description, session_id=session_id)
