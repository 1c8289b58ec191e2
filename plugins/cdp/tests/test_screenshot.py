"""capture_screenshot: a capture that gets no answer is retried after nudging the page."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from viewfinder.cdp import CDPSession, CDPTimeoutError
from viewfinder.cdp.screenshot import CAPTURE_METHOD, capture_screenshot


class StallingSend:
    """Routes commands to a real page, but lets the first ``stalls`` captures go unanswered."""

    def __init__(self, page: CDPSession, stalls: int) -> None:
        self.page = page
        self.stalls = stalls
        self.sent: list[str] = []

    async def __call__(self, method: str, params: dict[str, Any] | None, timeout: float) -> Any:
        self.sent.append(method)
        if method == CAPTURE_METHOD and self.stalls:
            self.stalls -= 1
            raise CDPTimeoutError(method, timeout, method=method)
        return await self.page.call(method, params, timeout=timeout)


async def test_unanswered_capture_is_retried_after_a_nudge(page: CDPSession) -> None:
    send = StallingSend(page, stalls=1)
    result = await capture_screenshot(page, {"format": "png"}, timeout=10, send=send)
    assert base64.b64decode(result["data"]).startswith(b"\x89PNG")
    assert send.sent[0] == CAPTURE_METHOD
    assert "Page.bringToFront" in send.sent
    assert "Page.startScreencast" in send.sent
    assert send.sent[-2:] == ["Page.stopScreencast", CAPTURE_METHOD]


async def test_a_capture_that_never_answers_says_so(page: CDPSession) -> None:
    send = StallingSend(page, stalls=2)
    with pytest.raises(CDPTimeoutError, match="retried once after nudging"):
        await capture_screenshot(page, {"format": "png"}, timeout=10, send=send)


async def test_a_healthy_capture_needs_no_nudge(page: CDPSession) -> None:
    send = StallingSend(page, stalls=0)
    await capture_screenshot(page, {"format": "jpeg", "quality": 50}, timeout=10, send=send)
    assert send.sent == [CAPTURE_METHOD]
