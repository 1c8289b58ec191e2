"""``/api/live``: a display's frames to the page; with ``--control``, the page's input back.

Read-only unless the viewer was started with ``--control``: then a page's text
messages are actions on the display, as core :class:`~viewfinder.core.Event` fields::

    {"kind": "click", "position": {"x": 120, "y": 48}, "button": "left"}
    {"kind": "key", "keys": ["ctrl", "s"]}     {"kind": "type", "text": "hello"}
    {"kind": "scroll", "position": {"x": 5, "y": 9}, "scroll_dy": 3}

performed through XTest (:class:`viewfinder.xvfb.XInput`), one at a time per display.
An action that cannot be read or performed is answered with an ``error`` message; the
connection stays open. A display the viewer may not show is refused (close code 1008).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from viewfinder.core import Event, EventKind, ViewfinderError
from viewfinder.viewer.displays import LiveDisplays
from viewfinder.viewer.live import LiveFeeds, Subscriber

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api")

#: What a page may do to a display (never wait, hold keys or drag for ages).
ALLOWED_KINDS = {
    EventKind.CLICK, EventKind.DOUBLE_CLICK, EventKind.RIGHT_CLICK, EventKind.MIDDLE_CLICK,
    EventKind.MOVE, EventKind.SCROLL, EventKind.KEY, EventKind.TYPE,
}  # fmt: skip
#: The longest text one message may type.
MAX_TEXT = 1000


@router.websocket("/live")
async def live(websocket: WebSocket, display: str) -> None:
    state = websocket.app.state
    displays: LiveDisplays = state.displays
    name = displays.allowed(display)
    if name is None:
        await websocket.accept()  # then closed with the reason, which the page shows
        await websocket.close(
            code=1008,
            reason=f"display {display[:40]} is not one this viewer shows (give it with --live)",
        )
        return
    await websocket.accept()
    feeds: LiveFeeds = state.feeds
    subscriber = Subscriber()
    try:
        feed = await feeds.join(name, subscriber)
    except ViewfinderError as exc:
        await websocket.send_json({"type": "error", "message": str(exc)})
        await websocket.close(code=1011)
        return
    control = bool(state.settings.control)
    await websocket.send_json(
        {
            "type": "hello",
            "display": name,
            "width": feed.size[0],
            "height": feed.size[1],
            "control": control,
            "format": feed.fmt,
            "damage_driven": feed.damage_driven,
        }
    )
    sender = asyncio.create_task(_send_frames(websocket, subscriber))
    try:
        while True:
            text = await websocket.receive_text()
            reply = await _act(state, name, text) if control else _read_only()
            if reply is not None:
                await websocket.send_json(reply)
    except WebSocketDisconnect:
        pass
    except Exception as exc:  # one page's failure never stops the feed for the others
        log.info("live view of %s for a page ended: %s", name, exc)
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender
        await feeds.leave(feed, subscriber)


async def _send_frames(websocket: WebSocket, subscriber: Subscriber) -> None:
    while True:
        message = await subscriber.queue.get()
        await websocket.send_bytes(message)
        subscriber.sent += 1
        if subscriber.ended is not None and subscriber.queue.empty():
            # the page has the reason in full; a close reason holds 123 bytes at most
            await websocket.close(code=1011, reason="the display died")
            return


def _read_only() -> dict[str, Any]:
    return {
        "type": "error",
        "message": "this live view is read-only: start the viewer with --control to send "
        "clicks and keys to the display",
    }


async def _act(state: Any, display: str, text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
        event = Event.model_validate(data)
    except (ValueError, ValidationError) as exc:
        return {"type": "error", "message": f"not an action: {str(exc)[:300]}"}
    if event.kind not in ALLOWED_KINDS:
        return {"type": "error", "message": f"{event.kind.value} is not allowed from a page"}
    if event.text is not None and len(event.text) > MAX_TEXT:
        return {"type": "error", "message": f"type at most {MAX_TEXT} characters at a time"}
    inputs = state.inputs
    async with inputs.lock(display):
        try:
            await asyncio.to_thread(inputs.get(display).perform, event)
        except (ViewfinderError, ValueError, OSError) as exc:
            return {"type": "error", "message": f"{event.kind.value} failed: {exc}"}
    return {"type": "done", "kind": event.kind.value}


class Inputs:
    """One XTest connection per display the pages control, and one action at a time."""

    def __init__(self) -> None:
        self._inputs: dict[str, Any] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, display: str) -> asyncio.Lock:
        return self._locks.setdefault(display, asyncio.Lock())

    def get(self, display: str) -> Any:
        found = self._inputs.get(display)
        if found is None:
            from viewfinder.xvfb import XInput

            found = self._inputs[display] = XInput(display)
        return found

    def close(self) -> None:
        for found in self._inputs.values():
            with contextlib.suppress(Exception):
                found.close()
        self._inputs.clear()
