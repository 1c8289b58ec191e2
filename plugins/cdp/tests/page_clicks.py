"""Clicks on a test page, as the page itself logged them (``window.clicked``)."""

from __future__ import annotations

import time

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.core import Event, EventKind, Point


def click_and_read_log(source: CdpElementSource, at: Point) -> list[str]:
    """Click at ``at`` through the source's page; what the page logged (up to 5 s)."""
    source.backend.act(Event(kind=EventKind.CLICK, position=at))
    deadline = time.monotonic() + 5
    log: list[str] = []
    while not log and time.monotonic() < deadline:
        log = list(source.backend.run(source.backend.session.evaluate("window.clicked")))
        time.sleep(0.05)
    return log
