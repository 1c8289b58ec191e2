"""What a program records itself: the Recorder's click(), type(), key(), ... methods."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from viewfinder.core import CaptureBackend, Event, EventKind, Point
from viewfinder.recorder.keys import parse_chord, stroke_for_char
from viewfinder.recorder.pairing import Pairing

CLICK_KINDS = {
    "left": EventKind.CLICK,
    "right": EventKind.RIGHT_CLICK,
    "middle": EventKind.MIDDLE_CLICK,
}


class ProgrammaticActions:
    """The actions a program records (a base of :class:`~viewfinder.recorder.Recorder`,
    which provides ``_apply`` and ``backend``). Time arguments ``at`` are
    :func:`time.monotonic` instants (default: now)."""

    @property
    def backend(self) -> CaptureBackend:
        raise NotImplementedError

    def _apply(self, step: Callable[[Pairing, float], Any], at: float | None) -> Any:
        raise NotImplementedError

    def click(
        self,
        x: int,
        y: int,
        *,
        button: str = "left",
        modifiers: Sequence[str] = (),
        at: float | None = None,
    ) -> Event:
        """Record a click at ``(x, y)``; call it just before performing the click."""
        if button not in CLICK_KINDS:
            raise ValueError(f"unknown mouse button {button!r}; use left, middle or right")
        event = Event(kind=CLICK_KINDS[button], position=Point(x=x, y=y), modifiers=list(modifiers))
        return self._apply(lambda pairing, now: pairing.action(event, now), at)

    def double_click(
        self, x: int, y: int, *, modifiers: Sequence[str] = (), at: float | None = None
    ) -> Event:
        """Record a double click at ``(x, y)``."""
        event = Event(
            kind=EventKind.DOUBLE_CLICK, position=Point(x=x, y=y), modifiers=list(modifiers)
        )
        return self._apply(lambda pairing, now: pairing.action(event, now), at)

    def right_click(self, x: int, y: int, *, at: float | None = None) -> Event:
        """Record a right click at ``(x, y)``."""
        return self.click(x, y, button="right", at=at)

    def scroll(
        self,
        x: int,
        y: int,
        dx: int = 0,
        dy: int = 0,
        *,
        modifiers: Sequence[str] = (),
        at: float | None = None,
    ) -> None:
        """Record ``dy`` wheel clicks down (negative: up) and ``dx`` right at ``(x, y)``.

        Scrolls in a row at the same place join one ``scroll`` event.
        """
        self._apply(lambda pairing, now: pairing.scroll(x, y, dx, dy, modifiers, now), at)

    def key(self, keys: str | Sequence[str], *, at: float | None = None) -> None:
        """Record a key or chord (``"ctrl+s"``, ``"Return"``); a plain character is typing."""
        stroke = parse_chord(keys)
        self._apply(lambda pairing, now: pairing.stroke(stroke, now), at)

    def type(self, text: str, *, at: float | None = None) -> None:
        """Record typed text into the typing burst (``\\n`` is Enter, ``\\b`` BackSpace)."""
        strokes = [stroke_for_char(char) for char in text]

        def apply(pairing: Pairing, now: float) -> None:
            for stroke in strokes:
                pairing.stroke(stroke, now)

        self._apply(apply, at)

    def record(self, event: Event, *, at: float | None = None) -> None:
        """Record any Event by the pairing rules (type, key and scroll join their bursts)."""
        if event.kind is EventKind.TYPE:
            self.type(event.text or "", at=at)
        elif event.kind is EventKind.KEY:
            self.key(event.keys, at=at)
        elif event.kind is EventKind.SCROLL and event.position is not None:
            self.scroll(
                event.position.x,
                event.position.y,
                event.scroll_dx,
                event.scroll_dy,
                modifiers=event.modifiers,
                at=at,
            )
        else:
            self._apply(lambda pairing, now: pairing.action(event, now), at)

    def act(self, event: Event) -> None:
        """Record ``event``, then perform it through the backend (xvfb and cdp can act)."""
        self.record(event)
        self.backend.act(event)

    def flush(self) -> None:
        """Write a pending typing burst, scroll burst or click now."""
        self._apply(lambda pairing, now: pairing.flush(), None)
