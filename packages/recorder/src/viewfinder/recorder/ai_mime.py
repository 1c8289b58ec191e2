"""Manifest lines in the ai_mime style (``action_type``, ``action_details``, ...).

ai_mime's recorder writes one line per action::

    {"action_type": "click",
     "action_details": {"button": "Button.left", "x": 516, "y": 263, "pressed": true},
     "screenshot": "screenshots/1.png", "timestamp": 1767877126.54}

:func:`to_ai_mime` turns an Event into such a line and :func:`from_ai_mime` reads one
back. ``action_type`` is the event kind; ``action_details`` uses ai_mime's field names
(``button`` as pynput spells it, ``x``/``y``, ``text``, ``key`` upper-cased as pynput
names keys, ``dx``/``dy`` with pynput's sign: positive ``dy`` scrolls *up*, the opposite
of viewfinder's ``scroll_dy``); ``timestamp`` is seconds since the epoch.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from viewfinder.core import Event, EventFormatError, EventKind, Point

_CLICKS = {
    EventKind.CLICK,
    EventKind.DOUBLE_CLICK,
    EventKind.TRIPLE_CLICK,
    EventKind.RIGHT_CLICK,
    EventKind.MIDDLE_CLICK,
}
# viewfinder key names <-> the upper-case names ai_mime writes (pynput's Key names).
_KEY_TO_AI_MIME = {
    "Return": "ENTER",
    "Escape": "ESC",
    "BackSpace": "BACKSPACE",
    "Page_Up": "PAGE_UP",
    "Page_Down": "PAGE_DOWN",
    "super": "CMD",
    "space": "SPACE",
}
_KEY_FROM_AI_MIME = {value: key for key, value in _KEY_TO_AI_MIME.items()}
_MODIFIERS = {"CTRL": "ctrl", "ALT": "alt", "SHIFT": "shift", "CMD": "super"}


def to_ai_mime(event: Event) -> dict[str, Any]:
    """The ai_mime-style line for ``event``."""
    kind = event.kind
    details: dict[str, Any] = {}
    if kind in _CLICKS:
        assert event.position is not None
        details = {
            "button": f"Button.{event.button or 'left'}",
            "x": event.position.x,
            "y": event.position.y,
            "pressed": True,
        }
    elif kind is EventKind.SCROLL:
        assert event.position is not None
        details = {
            "x": event.position.x,
            "y": event.position.y,
            "dx": event.scroll_dx,
            "dy": -event.scroll_dy,
        }
    elif kind is EventKind.TYPE:
        details = {"text": event.text}
    elif kind in (EventKind.KEY, EventKind.HOLD_KEY):
        details = {"key": "+".join(_KEY_TO_AI_MIME.get(k, k).upper() for k in event.keys)}
    elif event.position is not None:
        details = {"x": event.position.x, "y": event.position.y}
    if event.modifiers:
        details["modifiers"] = list(event.modifiers)
    return {
        "action_type": kind.value,
        "action_details": details,
        "screenshot": event.screenshot,
        "timestamp": event.timestamp.timestamp(),
    }


def from_ai_mime(line: dict[str, Any]) -> Event:
    """Read an ai_mime-style line (as :func:`to_ai_mime` writes, or ai_mime itself)."""
    try:
        action = line["action_type"]
        details = line.get("action_details") or {}
        stamp = datetime.fromtimestamp(float(line["timestamp"]), UTC)
        fields: dict[str, Any] = {"timestamp": stamp, "screenshot": line.get("screenshot")}
        if details.get("modifiers"):
            fields["modifiers"] = list(details["modifiers"])
        if action == "click":
            button = str(details.get("button", "Button.left")).removeprefix("Button.")
            kind = {"right": EventKind.RIGHT_CLICK, "middle": EventKind.MIDDLE_CLICK}.get(
                button, EventKind.CLICK
            )
            return Event(kind=kind, position=_point(details), **fields)
        kind = EventKind(action)
        if kind in _CLICKS or kind in (EventKind.MOVE,):
            return Event(kind=kind, position=_point(details), **fields)
        if kind is EventKind.SCROLL:
            return Event(
                kind=kind,
                position=_point(details),
                scroll_dx=int(details.get("dx", 0)),
                scroll_dy=-int(details.get("dy", 0)),
                **fields,
            )
        if kind is EventKind.TYPE:
            return Event(kind=kind, text=details["text"], **fields)
        if kind in (EventKind.KEY, EventKind.HOLD_KEY):
            return Event(kind=kind, keys=_keys(str(details["key"])), **fields)
        return Event(kind=kind, **fields)
    except EventFormatError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise EventFormatError(f"cannot read ai_mime line {line!r}: {exc}") from exc


def _point(details: dict[str, Any]) -> Point:
    return Point(x=round(float(details["x"])), y=round(float(details["y"])))


def _keys(text: str) -> list[str]:
    keys = []
    for part in text.split("+"):
        upper = part.upper()
        if upper in _MODIFIERS:
            keys.append(_MODIFIERS[upper])
        elif upper in _KEY_FROM_AI_MIME:
            keys.append(_KEY_FROM_AI_MIME[upper])
        elif len(part) == 1:
            keys.append(part.lower())
        else:
            keys.append(part[:1].upper() + part[1:].lower())  # TAB -> Tab, F4 -> F4
    return keys
