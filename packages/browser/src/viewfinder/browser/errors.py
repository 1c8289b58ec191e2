"""Errors the browser tool raises on purpose.

What a *snippet* does wrong (a syntax error, an exception, running past its timeout)
is not raised: it comes back as an error result, because an agent reads it and tries
again. What the *caller* does wrong (a timeout outside 1..600 s, an unreachable CDP
URL) raises one of these, or the CDP client's own errors (``CDPConnectError``, ...).
All derive from core's :class:`~viewfinder.core.ViewfinderError`.
"""

from __future__ import annotations

from viewfinder.core import ViewfinderError


class BrowserError(ViewfinderError):
    """Base class of the browser tool's errors."""


class BrowserInputError(BrowserError, ValueError):
    """An argument of the browser tool's API cannot be used (what and why are said)."""


class InvalidTimeoutError(BrowserInputError):
    """A ``browser_execute`` timeout is not a number of seconds between 1 and 600."""


class SnippetSessionClosedError(BrowserError):
    """A snippet used its ``session`` (or ``page``) after its call ended or timed out.

    Each ``browser_execute`` call hands its snippet a session view that works only for
    that call; afterwards it sends no CDP command, so a task the snippet left behind
    can neither act on the page nor have screenshots attributed to a later call.
    """


class ElementNotFoundError(BrowserError, LookupError):
    """A ``page`` helper was given a CSS selector that matches nothing on the page."""


class PageNotFoundError(BrowserError, LookupError):
    """``page.switch_to(...)`` named no page the browser has."""
