"""The session a snippet sees: the page's CDP session, valid for one call only.

A :class:`SnippetSession` is a :class:`~viewfinder.cdp.CDPSession` on the same page
(``evaluate``, ``navigate``, ``on``, ``on_call_result`` and the rest work as usual),
with three differences:

- it is closed when its call ends or times out, and a closed view sends no command,
  so nothing the snippet left running can act after its call;
- every command it sends runs with :data:`CURRENT_VIEW` set to it, so a call-result
  listener (which the CDP client runs inside ``call()``, in the caller's context) can
  tell exactly which view sent what: that is how screenshots are attributed;
- a ``Page.captureScreenshot`` that hangs (Chromium's compositor can go idle and
  produce no frame) is retried once, after a screencast nudge, within the call's time.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable
from typing import Any

from viewfinder.browser.errors import SnippetSessionClosedError
from viewfinder.cdp import CDPSession, Subscription
from viewfinder.cdp.connection import DEFAULT_CALL_TIMEOUT, EventPredicate
from viewfinder.cdp.listeners import Listener
from viewfinder.cdp.screenshot import CAPTURE_METHOD, NUDGE_FRAME_TIMEOUT, capture_screenshot

log = logging.getLogger(__name__)

#: The longest a first capture attempt may take before we nudge and retry; a healthy
#: capture of a viewport takes well under a second.
CAPTURE_ATTEMPT_TIMEOUT = 15.0
#: No attempt gets less than this, however little time is left.
MIN_ATTEMPT_TIMEOUT = 0.5

#: The view whose command is being sent in the current task, if any.
CURRENT_VIEW: contextvars.ContextVar[SnippetSession | None] = contextvars.ContextVar(
    "viewfinder_browser_current_view", default=None
)


class SnippetSession(CDPSession):
    """A view of ``page`` for the call ``call_id``, usable until :meth:`close_view`.

    ``deadline`` is the call's end on the :func:`time.monotonic` clock; it bounds the
    capture retry. Closing the view leaves the page open: the browser session owns it.
    """

    def __init__(self, page: CDPSession, *, call_id: str, deadline: float) -> None:
        super().__init__(
            page.connection,
            page.session_id,
            page.target_id,
            viewport=page.viewport,
            owns_target=False,
        )
        self.call_id = call_id
        self.deadline = deadline
        self._closed_reason: str | None = None
        self._subscriptions: list[Subscription] = []
        self._waiters: list[asyncio.Future[dict[str, Any]]] = []

    # -- validity -----------------------------------------------------------------------

    @property
    def remaining(self) -> float:
        """Seconds left before the call's deadline (negative once it passed)."""
        return self.deadline - time.monotonic()

    @property
    def closed(self) -> bool:
        return self._closed_reason is not None

    def close_view(self, reason: str) -> None:
        """Refuse every further command; safe from any thread.

        Listeners and waiters registered through the view are released by
        :meth:`release`, which must run on the connection's loop.
        """
        if self._closed_reason is None:
            self._closed_reason = reason

    def release(self) -> None:
        """Unsubscribe what was registered through this view and cancel its waiters."""
        for subscription in self._subscriptions:
            subscription.remove()
        self._subscriptions.clear()
        for waiter in self._waiters:
            waiter.cancel()
        self._waiters.clear()

    def check_open(self, what: str) -> None:
        """Raise :class:`SnippetSessionClosedError` (saying ``what`` cannot be done) once
        the view is closed."""
        self._check_open(what)

    def _check_open(self, what: str) -> None:
        if self._closed_reason is not None:
            raise SnippetSessionClosedError(
                f"cannot {what}: this snippet's session is closed ({self._closed_reason}). "
                "A session works only during its own browser_execute call; start a new call."
            )

    # -- commands -----------------------------------------------------------------------

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> dict[str, Any]:
        """Call ``method`` on the page, as this call's snippet."""
        self._check_open(f"call {method}")
        token = CURRENT_VIEW.set(self)
        try:
            if method == CAPTURE_METHOD:
                return await self._capture(params, timeout)
            return await self._send(method, params, timeout)
        finally:
            CURRENT_VIEW.reset(token)

    async def _send(
        self, method: str, params: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        # The one place a command leaves the view; checked again because a capture
        # retry may come after the view was closed.
        self._check_open(f"call {method}")
        return await super().call(method, params, timeout=timeout)

    async def _capture(self, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        # The first attempt gets at most half of what is left of the call, so a retry
        # after nudging the page still fits in the call's time.
        return await capture_screenshot(
            self,
            params,
            timeout=timeout,
            first_timeout=min(
                CAPTURE_ATTEMPT_TIMEOUT, max(self.remaining / 2, MIN_ATTEMPT_TIMEOUT)
            ),
            retry_timeout=lambda: max(self.remaining, MIN_ATTEMPT_TIMEOUT),
            send=self._send,
            frame_timeout=max(min(NUDGE_FRAME_TIMEOUT, self.remaining / 4), 0.05),
        )

    # -- listeners ------------------------------------------------------------------------

    def on(self, event: str, fn: Listener) -> Subscription:
        """Call ``fn(params)`` for every ``event`` of the page, until the call ends."""
        self._check_open(f"listen for {event}")
        subscription = super().on(event, fn)
        self._subscriptions.append(subscription)
        return subscription

    def on_call_result(self, fn: Listener) -> Subscription:
        """Call ``fn(method, params, result)`` after every successful call on the page,
        until the call ends."""
        self._check_open("listen for call results")
        subscription = super().on_call_result(fn)
        self._subscriptions.append(subscription)
        return subscription

    def on_own_call_result(
        self, fn: Callable[[str, dict[str, Any], dict[str, Any]], Any]
    ) -> Subscription:
        """Like :meth:`on_call_result`, but only for the calls this view sent."""

        def own(method: str, params: dict[str, Any], result: dict[str, Any]) -> Any:
            if CURRENT_VIEW.get() is self:
                return fn(method, params, result)
            return None

        return self.on_call_result(own)

    def expect_event(
        self, event: str, predicate: EventPredicate | None = None
    ) -> asyncio.Future[dict[str, Any]]:
        """A future for the next matching ``event``; cancelled when the call ends."""
        self._check_open(f"wait for {event}")
        future = super().expect_event(event, predicate)
        self._waiters.append(future)
        future.add_done_callback(self._forget_waiter)
        return future

    def _forget_waiter(self, future: asyncio.Future[dict[str, Any]]) -> None:
        if future in self._waiters:
            self._waiters.remove(future)

    async def close(self, *, timeout: float = 10.0) -> None:
        """Close this view (not the page, which outlives the call)."""
        self.close_view("the snippet closed it")

    def __repr__(self) -> str:
        state = f"closed: {self._closed_reason}" if self._closed_reason else "open"
        return f"SnippetSession(call_id={self.call_id!r}, target_id={self.target_id!r}, {state})"
