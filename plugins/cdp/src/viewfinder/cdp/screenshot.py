"""``Page.captureScreenshot`` that survives an idle compositor.

Headless Chromium now and then leaves a capture unanswered: a page that is not drawn
(a background tab) or a compositor that went idle produces no frame (seen about once
in 25 captures on a loaded machine). Asking again after making the page draw gets an
answer at once. :func:`capture_screenshot` makes a first attempt with a short timeout,
then nudges the page and retries once with the time that is left.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from viewfinder.cdp.connection import wait_for_future
from viewfinder.cdp.errors import CDPError, CDPTimeoutError

if TYPE_CHECKING:
    from viewfinder.cdp.session import CDPSession

log = logging.getLogger(__name__)

CAPTURE_METHOD = "Page.captureScreenshot"
#: The longest a first attempt waits: a healthy viewport capture takes well under 1 s.
FIRST_ATTEMPT_TIMEOUT = 4.0
#: How long the nudge waits for a screencast frame.
NUDGE_FRAME_TIMEOUT = 1.0
_NUDGE_CALL_TIMEOUT = 5.0

#: ``send(method, params, timeout) -> result``: how commands reach the page.
Send = Callable[[str, dict[str, Any] | None, float], Awaitable[dict[str, Any]]]


def _default_send(session: CDPSession) -> Send:
    async def send(method: str, params: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        return await session.call(method, params, timeout=timeout)

    return send


async def nudge_page(
    session: CDPSession, send: Send | None = None, frame_timeout: float = NUDGE_FRAME_TIMEOUT
) -> None:
    """Make the compositor draw: bring the page to the front of its window (a background
    tab is not drawn), then run a short screencast, which forces a frame without touching
    the viewport or emulation settings. Best effort: failures are logged."""
    send = send or _default_send(session)
    frame = session.connection.expect_event("Page.screencastFrame", session_id=session.session_id)
    try:
        await send("Page.bringToFront", None, _NUDGE_CALL_TIMEOUT)
        await send(
            "Page.startScreencast",
            {"format": "jpeg", "quality": 10, "maxWidth": 64, "maxHeight": 64},
            _NUDGE_CALL_TIMEOUT,
        )
        params = await wait_for_future(frame, "a screencast frame", max(frame_timeout, 0.05))
        await send(
            "Page.screencastFrameAck", {"sessionId": params["sessionId"]}, _NUDGE_CALL_TIMEOUT
        )
    except CDPError as exc:  # the retry is still worth making
        log.info("nudging the page was incomplete: %s", exc)
    finally:
        frame.cancel()
        try:
            await send("Page.stopScreencast", None, _NUDGE_CALL_TIMEOUT)
        except CDPError as exc:
            log.info("could not stop the nudge screencast: %s", exc)


async def capture_screenshot(
    session: CDPSession,
    params: dict[str, Any] | None,
    *,
    timeout: float,
    first_timeout: float | None = None,
    retry_timeout: Callable[[], float] | None = None,
    send: Send | None = None,
    frame_timeout: float = NUDGE_FRAME_TIMEOUT,
) -> dict[str, Any]:
    """Call ``Page.captureScreenshot``; on no answer, nudge the page and ask once more.

    ``timeout`` bounds each attempt. The first attempt waits ``first_timeout`` (default
    the smaller of :data:`FIRST_ATTEMPT_TIMEOUT` and ``timeout``); the retry waits
    ``retry_timeout()`` when given (a caller with a deadline passes what is left), else
    ``timeout``. ``send`` replaces ``session.call`` for callers that route commands
    through their own checks. Raises :class:`CDPTimeoutError` when the retry goes
    unanswered too.
    """
    send = send or _default_send(session)
    first = min(timeout, first_timeout if first_timeout is not None else FIRST_ATTEMPT_TIMEOUT)
    try:
        return await send(CAPTURE_METHOD, params, first)
    except CDPTimeoutError:
        log.info("captureScreenshot gave no answer in %.1fs; nudging the page", first)
    await nudge_page(session, send, frame_timeout)
    second = min(timeout, retry_timeout()) if retry_timeout is not None else timeout
    try:
        return await send(CAPTURE_METHOD, params, second)
    except CDPTimeoutError as exc:
        raise CDPTimeoutError(
            "Page.captureScreenshot, retried once after nudging the page (the compositor "
            "produced no frame)",
            exc.timeout,
            method=CAPTURE_METHOD,
        ) from exc
