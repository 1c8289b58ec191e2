"""Performing core Events on a page through the CDP ``Input`` domain.

Coordinates are viewport CSS pixels, which equal screenshot pixels because the
viewport is emulated at device scale factor 1. Mouse input goes through
``Input.dispatchMouseEvent``, key chords through ``Input.dispatchKeyEvent`` and typed
text through ``Input.insertText`` (one call however long the text, and no keyboard
layout to get wrong).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from viewfinder.cdp.keys import SHIFT, KeyDefinition, key_for, modifier_for, typed
from viewfinder.cdp.session import CDPSession
from viewfinder.core import ActionError, Event, EventKind, Point

#: Pixels one wheel click scrolls (Chromium's own step on Linux is about this).
SCROLL_PIXELS_PER_CLICK = 100
#: Intermediate pointer moves during a drag, so pages that track mousemove follow it.
DRAG_STEPS = 5

_BUTTON_BITS = {"left": 1, "right": 2, "middle": 4}
_CLICK_COUNTS = {
    EventKind.CLICK: 1,
    EventKind.DOUBLE_CLICK: 2,
    EventKind.TRIPLE_CLICK: 3,
    EventKind.RIGHT_CLICK: 1,
    EventKind.MIDDLE_CLICK: 1,
}


def modifier_mask(names: Iterable[str]) -> int:
    """The CDP modifier bitmask (Alt=1, Ctrl=2, Meta=4, Shift=8) for modifier names."""
    mask = 0
    for name in names:
        definition = modifier_for(name)
        if definition is None:
            raise ActionError(
                f"{name!r} is not a modifier; use ctrl, alt, shift or super (meta, cmd)"
            )
        mask |= definition.modifier
    return mask


class PageInput:
    """The mouse and keyboard of one page; remembers where the pointer is."""

    def __init__(self, session: CDPSession) -> None:
        self.session = session
        self.position = Point(x=0, y=0)
        self._buttons = 0

    async def perform(self, event: Event) -> None:
        """Perform ``event``; raises :class:`ActionError` for what a page cannot do."""
        kind = event.kind
        mods = modifier_mask(event.modifiers)
        if kind in _CLICK_COUNTS:
            await self.click(_at(event.position), event.button or "left", _CLICK_COUNTS[kind], mods)
        elif kind is EventKind.MOVE:
            await self.move(_at(event.position), mods)
        elif kind is EventKind.DRAG:
            await self.drag(
                _at(event.start_position), _at(event.position), event.button or "left", mods
            )
        elif kind in (EventKind.MOUSE_DOWN, EventKind.MOUSE_UP):
            if event.position is not None:
                await self.move(event.position, mods)
            pressed = kind is EventKind.MOUSE_DOWN
            await self.button(event.button or "left", pressed=pressed, modifiers=mods)
        elif kind is EventKind.SCROLL:
            await self.scroll(_at(event.position), event.scroll_dx, event.scroll_dy, mods)
        elif kind is EventKind.KEY:
            await self.press([*event.modifiers, *event.keys])
        elif kind is EventKind.HOLD_KEY:
            await self.press([*event.modifiers, *event.keys], hold=event.duration_s or 0.0)
        elif kind is EventKind.TYPE:
            await self.type(event.text or "")
        elif kind is EventKind.WAIT:
            await asyncio.sleep(event.duration_s or 0.0)
        elif kind is EventKind.SCREENSHOT:
            pass  # nothing to do on the page; the caller captures
        else:  # pragma: no cover - a kind added to core without support here
            raise ActionError(f"the cdp backend cannot perform {kind.value} events yet")

    # -- mouse ----------------------------------------------------------------------

    async def _mouse(self, kind: str, at: Point, modifiers: int, **extra: Any) -> None:
        await self.session.call(
            "Input.dispatchMouseEvent",
            {
                "type": kind,
                "x": at.x,
                "y": at.y,
                "modifiers": modifiers,
                "buttons": self._buttons,
                **extra,
            },
        )
        self.position = at

    async def move(self, to: Point, modifiers: int = 0) -> None:
        """Move the pointer to ``to``."""
        await self._mouse("mouseMoved", to, modifiers)

    async def button(
        self, name: str, *, pressed: bool, modifiers: int = 0, click_count: int = 1
    ) -> None:
        """Press or release mouse button ``name`` where the pointer is."""
        bit = _BUTTON_BITS[name]
        self._buttons = self._buttons | bit if pressed else self._buttons & ~bit
        await self._mouse(
            "mousePressed" if pressed else "mouseReleased",
            self.position,
            modifiers,
            button=name,
            clickCount=click_count,
        )

    async def click(
        self, at: Point, button: str = "left", count: int = 1, modifiers: int = 0
    ) -> None:
        """Click ``count`` times at ``at``; the n-th press carries clickCount n, which is
        how the page tells a double or triple click."""
        await self.move(at, modifiers)
        for n in range(1, count + 1):
            await self.button(button, pressed=True, modifiers=modifiers, click_count=n)
            await self.button(button, pressed=False, modifiers=modifiers, click_count=n)

    async def drag(
        self, start: Point, end: Point, button: str = "left", modifiers: int = 0
    ) -> None:
        """Press at ``start``, move to ``end`` in a few steps, release."""
        await self.move(start, modifiers)
        await self.button(button, pressed=True, modifiers=modifiers)
        for step in range(1, DRAG_STEPS + 1):
            point = Point(
                x=start.x + (end.x - start.x) * step // DRAG_STEPS,
                y=start.y + (end.y - start.y) * step // DRAG_STEPS,
            )
            await self.move(point, modifiers)
        await self.button(button, pressed=False, modifiers=modifiers)

    async def scroll(self, at: Point, dx: int, dy: int, modifiers: int = 0) -> None:
        """Turn the wheel ``dx``/``dy`` clicks (positive: right/down) over ``at``."""
        await self.move(at, modifiers)
        await self._mouse(
            "mouseWheel",
            at,
            modifiers,
            deltaX=dx * SCROLL_PIXELS_PER_CLICK,
            deltaY=dy * SCROLL_PIXELS_PER_CLICK,
        )

    # -- keyboard ---------------------------------------------------------------------

    async def press(self, chord: list[str], hold: float = 0.0) -> None:
        """Press the keys of ``chord`` in order (``["ctrl", "a"]``), then release them in
        reverse; with ``hold`` keep them down that many seconds."""
        definitions = [key_for(name) for name in chord]
        held: list[KeyDefinition] = []
        mods = 0
        try:
            for definition in definitions:
                mods |= definition.modifier
                await self._key_down(definition, mods)
                held.append(definition)
            if hold:
                await asyncio.sleep(hold)
        finally:
            for definition in reversed(held):
                await self._key_up(definition, mods)
                mods &= ~definition.modifier

    async def _key_down(self, definition: KeyDefinition, mods: int) -> None:
        key, text = typed(definition, mods)
        params: dict[str, Any] = {
            # "keyDown" with text types it; "rawKeyDown" is a key that types nothing.
            "type": "keyDown" if text else "rawKeyDown",
            "modifiers": mods | (SHIFT if definition.needs_shift else 0),
            "key": key,
            "code": definition.code,
            "windowsVirtualKeyCode": definition.key_code,
            "nativeVirtualKeyCode": definition.key_code,
        }
        if text:
            params["text"] = params["unmodifiedText"] = text
        if definition.modifier:
            params["location"] = 1  # the left-hand modifier keys
        await self.session.call("Input.dispatchKeyEvent", params)

    async def _key_up(self, definition: KeyDefinition, mods: int) -> None:
        key, _ = typed(definition, mods)
        params: dict[str, Any] = {
            "type": "keyUp",
            "modifiers": (mods & ~definition.modifier) | (SHIFT if definition.needs_shift else 0),
            "key": key,
            "code": definition.code,
            "windowsVirtualKeyCode": definition.key_code,
            "nativeVirtualKeyCode": definition.key_code,
        }
        if definition.modifier:
            params["location"] = 1
        await self.session.call("Input.dispatchKeyEvent", params)

    async def type(self, text: str) -> None:
        """Type ``text`` into the focused element; each newline is an Enter key press."""
        lines = text.split("\n")
        for index, line in enumerate(lines):
            if index:
                await self.press(["Return"])
            if line:
                await self.session.call("Input.insertText", {"text": line})


def _at(point: Point | None) -> Point:
    if point is None:  # the Event model guarantees positions where these kinds need one
        raise ActionError("this event needs a position")
    return point
