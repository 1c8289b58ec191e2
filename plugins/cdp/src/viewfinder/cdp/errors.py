"""Errors of the CDP client and the Chromium launcher.

All of them derive from :class:`CDPError`, which derives from core's
:class:`~viewfinder.core.ViewfinderError`, so ``except CDPError`` catches everything
that went wrong talking to a browser and ``except ViewfinderError`` still catches it
with the rest of viewfinder. A missing Chromium binary is core's
:class:`~viewfinder.core.DependencyMissingError`, like every other missing program.
"""

from __future__ import annotations

from typing import Any

from viewfinder.core import ViewfinderError


class CDPError(ViewfinderError):
    """Base of the CDP error family, and the error a CDP error response becomes.

    For an error response ``code`` and ``message`` are the protocol's (``-32601``,
    ``"'Foo.bar' wasn't found"``) and ``method`` is the method that was called. Errors
    that are not responses (a timeout, a closed socket) leave ``code`` as None.
    """

    def __init__(self, message: str, *, method: str | None = None, code: int | None = None) -> None:
        self.message = message
        self.method = method
        self.code = code
        where = f"{method}: " if method else ""
        suffix = f" (CDP error {code})" if code is not None else ""
        super().__init__(f"{where}{message}{suffix}")


class CDPTimeoutError(CDPError, TimeoutError):
    """A call or an awaited event did not arrive within its timeout."""

    def __init__(self, what: str, timeout: float, *, method: str | None = None) -> None:
        self.timeout = timeout
        super().__init__(
            f"no answer to {what} within {timeout:g}s; the page may be busy or the browser "
            "hung. Raise the timeout or check the browser.",
            method=method,
        )


class CDPConnectionClosedError(CDPError, ConnectionError):
    """The websocket to the browser closed (the browser exited, crashed or was closed)."""


class CDPConnectError(CDPError, ConnectionError):
    """No CDP endpoint could be reached at the URL given."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(
            f"cannot connect to a browser at {url}: {reason}. Start one with "
            "`viewfinder browser launch`, or run `chromium --headless "
            "--remote-debugging-port=9222` and use http://127.0.0.1:9222"
        )


class CDPNavigationError(CDPError):
    """A page could not be loaded (the browser reported a network or URL error)."""


class JavaScriptError(CDPError):
    """JavaScript run through ``Runtime.evaluate`` threw; ``details`` is CDP's account."""

    def __init__(self, text: str, details: dict[str, Any]) -> None:
        self.text = text
        self.details = details
        super().__init__(f"JavaScript threw: {text}", method="Runtime.evaluate")


class ChromiumLaunchError(CDPError):
    """Chromium was found but did not start and open its DevTools endpoint."""
