"""The pairing rules: which frame each action gets, and when its manifest line is written.

- Before a non-typing action, pending typing is flushed; then the frame from just
  before the action is frozen, the event written, and the live frame refreshed at once.
- Typed characters gather into a burst, recorded as one ``type`` event paired with the
  frame from before its first character (also kept as ``pretyping_screenshot.png``).
  BackSpace removes the burst's last character; a character with Ctrl/Alt/Super held
  is a hotkey; Enter, Tab, Escape, arrows and every other named key end the burst and
  are ``key`` events. A burst also ends after ``typing_pause`` without typing, and on stop.
- Wheel clicks gather into one ``scroll`` event per burst (same place, same direction,
  less than ``scroll_pause`` apart).
- A press of the left button waits ``double_click_interval`` for a second one nearby;
  two make one ``double_click`` event, three a ``triple_click``.
- A pointer action (click, double click, right or middle click, scroll, the press of a
  drag) carries the element under its point when an ``elements`` lookup is given
  (:mod:`viewfinder.recorder.pointer_elements`): looked up once, when the action
  begins (the first press of a double click, the first wheel click of a burst), in a
  tree read before the press's instant, as its frame is. It also carries the
  application whose window was in front there (``window``) when a ``windows`` lookup
  is given (:mod:`viewfinder.recorder.pointer_windows`), asked at the same moment.
- A press of the left button that moves more than ``drag_distance`` before its release is
  a ``drag``: from the press to the release, with its duration and its path (the points
  the pointer went through, thinned to those that change its course) in the line's
  ``path``. While the button is held nothing is written.

Pending actions (a burst, a click that may become a double click) already hold their
frame; their lines are written when they end, always before the next action's line.
:class:`Pairing` is not thread-safe: the recorder calls it under its lock.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from viewfinder.core import POINTER_KINDS, ElementAnchor, Event, EventKind, Point
from viewfinder.recorder.frames import Frame, FrameStore
from viewfinder.recorder.keys import KeyStroke, ordered_modifiers
from viewfinder.recorder.layout import SessionLayout
from viewfinder.recorder.manifest import ManifestWriter

log = logging.getLogger(__name__)
_CLICK_KINDS = {1: EventKind.CLICK, 2: EventKind.DOUBLE_CLICK, 3: EventKind.TRIPLE_CLICK}
_OTHER_BUTTONS = {"right": EventKind.RIGHT_CLICK, "middle": EventKind.MIDDLE_CLICK}
#: The element under a screen point, or None (see :mod:`viewfinder.recorder.pointer_elements`).
#: Called with the point and the monotonic instant of the press.
ElementLookup = Callable[[int, int, float], ElementAnchor | None]
#: The application in front at a screen point, or None (see
#: :mod:`viewfinder.recorder.pointer_windows`).
WindowLookup = Callable[[int, int], str | None]
#: Pointer kinds that act on what is under their point (a move only passes over it).
_ELEMENT_KINDS = POINTER_KINDS - {EventKind.MOVE, EventKind.MOUSE_UP}


@dataclass(frozen=True)
class PairingSettings:
    """Time and distance thresholds of the pairing rules."""

    typing_pause: float = 1.0
    scroll_pause: float = 0.5
    scroll_distance: int = 24
    double_click_interval: float = 0.4
    double_click_distance: int = 5
    drag_distance: int = 5
    #: a path's points closer than this to the line through their neighbours are dropped
    path_tolerance: float = 2.0
    fsync: bool = True


@dataclass
class _Typing:
    frame: Frame
    started: float
    last: float
    chars: list[str] = field(default_factory=list)


@dataclass
class _Scroll:
    frame: Frame
    started: float
    last: float
    x: int
    y: int
    dx: int
    dy: int
    modifiers: tuple[str, ...]
    element: ElementAnchor | None = None
    window: str | None = None


@dataclass
class _Click:
    frame: Frame
    started: float
    last: float
    x: int
    y: int
    modifiers: tuple[str, ...]
    count: int = 1
    #: the left button is still down (a click in progress, or a drag)
    held: bool = True
    #: where the pointer went while the button was held: (x, y, monotonic time)
    path: list[tuple[int, int, float]] = field(default_factory=list)
    element: ElementAnchor | None = None
    window: str | None = None


def wall_clock(at: float) -> datetime:
    """The UTC time of monotonic instant ``at``."""
    return datetime.fromtimestamp(time.time() - (time.monotonic() - at), UTC)


def _same_sign(a: int, b: int) -> bool:
    return (a > 0) == (b > 0)


class Pairing:
    """Turns input into manifest lines with pre-action frames (see the module docstring)."""

    def __init__(
        self,
        frames: FrameStore,
        manifest: ManifestWriter,
        layout: SessionLayout,
        *,
        next_seq: int = 0,
        settings: PairingSettings | None = None,
        on_event: Callable[[int, Event], Any] | None = None,
        elements: ElementLookup | None = None,
        windows: WindowLookup | None = None,
    ) -> None:
        self.frames = frames
        self.elements = elements
        self.windows = windows
        self.manifest = manifest
        self.layout = layout
        self.next_seq = next_seq
        self.settings = settings or PairingSettings()
        self.counts: Counter[str] = Counter()
        self._on_event = on_event
        self._pending: _Typing | _Scroll | _Click | None = None
        #: the input source reports releases and motion (X RECORD does), so a press
        #: stays open until its release and may become a drag; without them a press is
        #: a click as soon as the double-click time has passed
        self.releases_reported = False

    # -- actions ---------------------------------------------------------------------

    def press(self, x: int, y: int, button: str, modifiers: Sequence[str], at: float) -> None:
        """A mouse button went down at ``(x, y)`` (a listener's raw press)."""
        held = ordered_modifiers(modifiers)
        if button in _OTHER_BUTTONS:
            self.action(
                Event(kind=_OTHER_BUTTONS[button], position=Point(x=x, y=y), modifiers=list(held)),
                at,
            )
            return
        pending = self._pending
        if isinstance(pending, _Click) and self._continues_click(pending, x, y, held, at):
            pending.count += 1
            pending.last = at
            pending.held = self.releases_reported
            if pending.count >= max(_CLICK_KINDS):
                self.flush()
            return
        element, window = self._element_at(x, y, at), self._window_at(x, y)
        self.flush()
        self._pending = _Click(
            self.frames.frame_before(at),
            at,
            at,
            x,
            y,
            held,
            held=self.releases_reported,
            path=[(x, y, at)],
            element=element,
            window=window,
        )
        self.frames.refresh()

    def motion(self, x: int, y: int, at: float) -> None:
        """The pointer moved to ``(x, y)``; it matters only while the left button is held."""
        pending = self._pending
        if isinstance(pending, _Click) and pending.held and pending.count == 1:
            pending.path.append((x, y, at))

    def release(self, x: int, y: int, at: float) -> None:
        """The left button went up at ``(x, y)``: ends a drag, or lets a click wait for more."""
        pending = self._pending
        if not isinstance(pending, _Click) or not pending.held:
            return
        pending.held = False
        pending.last = at
        if pending.count != 1:
            return
        pending.path.append((x, y, at))
        reach = max(math.dist((px, py), (pending.x, pending.y)) for px, py, _ in pending.path)
        if reach <= self.settings.drag_distance:
            return
        self._pending = None
        event = Event(
            kind=EventKind.DRAG,
            start_position=Point(x=pending.x, y=pending.y),
            position=Point(x=x, y=y),
            duration_s=round(max(0.0, at - pending.started), 3),
            modifiers=list(pending.modifiers),
            element=pending.element,
            window=pending.window,
        )
        path = thin_path(pending.path, self.settings.path_tolerance)
        extra = {"path": [[px, py, round(t - pending.started, 3)] for px, py, t in path]}
        self._commit(event, pending.frame, pending.started, extra)

    def scroll(self, x: int, y: int, dx: int, dy: int, modifiers: Sequence[str], at: float) -> None:
        """``dx``/``dy`` wheel clicks at ``(x, y)``; joins the scroll burst it continues."""
        if not (dx or dy):
            return
        held = ordered_modifiers(modifiers)
        pending = self._pending
        if isinstance(pending, _Scroll) and self._continues_scroll(pending, x, y, dx, dy, held, at):
            pending.dx += dx
            pending.dy += dy
            pending.last = at
            return
        element, window = self._element_at(x, y, at), self._window_at(x, y)
        self.flush()
        self._pending = _Scroll(
            self.frames.frame_before(at), at, at, x, y, dx, dy, held, element=element,
            window=window,
        )  # fmt: skip
        self.frames.refresh()

    def stroke(self, stroke: KeyStroke, at: float) -> None:
        """One classified key press (see :mod:`viewfinder.recorder.keys`)."""
        pending = self._pending
        if stroke.kind == "modifier":
            return
        if stroke.kind == "char":
            assert stroke.char is not None
            if not isinstance(pending, _Typing):
                self.flush()
                pending = self._begin_typing(at)
            pending.chars.append(stroke.char)
            pending.last = at
            return
        if stroke.kind == "backspace" and isinstance(pending, _Typing) and pending.chars:
            pending.chars.pop()
            pending.last = at
            return
        keys = list(stroke.keys) if stroke.kind == "key" else ["BackSpace"]
        self.action(Event(kind=EventKind.KEY, keys=keys), at)

    def action(self, event: Event, at: float) -> Event:
        """A complete action: flush what is pending, freeze, write, refresh."""
        if event.kind in _ELEMENT_KINDS:
            point = event.start_position or event.position
            if point is not None:
                found: dict[str, Any] = {}
                if event.element is None:
                    found["element"] = self._element_at(point.x, point.y, at)
                if event.window is None:
                    found["window"] = self._window_at(point.x, point.y)
                event = event.model_copy(update=found)
        self.flush()
        return self._commit(event, self.frames.frame_before(at), at)

    # -- pending actions -------------------------------------------------------------

    def deadline(self) -> float | None:
        """When the pending action ends on its own (monotonic), or None."""
        pending, settings = self._pending, self.settings
        if isinstance(pending, _Typing):
            return pending.last + settings.typing_pause
        if isinstance(pending, _Scroll):
            return pending.last + settings.scroll_pause
        if isinstance(pending, _Click):
            if pending.held and pending.count == 1:
                return None  # a click or a drag in progress: its release decides
            return pending.last + settings.double_click_interval
        return None

    def flush(self) -> Event | None:
        """Write the pending action's line now (a typing burst with no text writes none)."""
        pending, self._pending = self._pending, None
        if isinstance(pending, _Typing):
            if not pending.chars:
                return None
            event = Event(kind=EventKind.TYPE, text="".join(pending.chars))
        elif isinstance(pending, _Scroll):
            event = Event(
                kind=EventKind.SCROLL,
                position=Point(x=pending.x, y=pending.y),
                scroll_dx=pending.dx,
                scroll_dy=pending.dy,
                modifiers=list(pending.modifiers),
                element=pending.element,
                window=pending.window,
            )
        elif isinstance(pending, _Click):
            kind = _CLICK_KINDS[min(pending.count, max(_CLICK_KINDS))]
            event = Event(
                kind=kind,
                position=Point(x=pending.x, y=pending.y),
                modifiers=list(pending.modifiers),
                element=pending.element,
                window=pending.window,
            )
        else:
            return None
        return self._commit(event, pending.frame, pending.started)

    @property
    def pending_kind(self) -> str | None:
        """What is waiting to be written: ``type``, ``scroll``, ``click`` or None."""
        return {_Typing: "type", _Scroll: "scroll", _Click: "click"}.get(type(self._pending))

    # -- internals -------------------------------------------------------------------

    def _element_at(self, x: int, y: int, at: float) -> ElementAnchor | None:
        return self.elements(x, y, at) if self.elements is not None else None

    def _window_at(self, x: int, y: int) -> str | None:
        return self.windows(x, y) if self.windows is not None else None

    def _begin_typing(self, at: float) -> _Typing:
        frame = self.frames.frame_before(at)
        self.frames.write(frame, self.layout.pretyping)
        burst = _Typing(frame, at, at)
        self._pending = burst
        return burst

    def _continues_click(
        self, pending: _Click, x: int, y: int, held: tuple[str, ...], at: float
    ) -> bool:
        settings = self.settings
        return (
            at - pending.last <= settings.double_click_interval
            and math.dist((x, y), (pending.x, pending.y)) <= settings.double_click_distance
            and held == pending.modifiers
        )

    def _continues_scroll(
        self,
        pending: _Scroll,
        x: int,
        y: int,
        dx: int,
        dy: int,
        held: tuple[str, ...],
        at: float,
    ) -> bool:
        settings = self.settings
        return (
            at - pending.last <= settings.scroll_pause
            and math.dist((x, y), (pending.x, pending.y)) <= settings.scroll_distance
            and held == pending.modifiers
            and (not dx or not pending.dx or _same_sign(dx, pending.dx))
            and (not dy or not pending.dy or _same_sign(dy, pending.dy))
        )

    def _commit(
        self, event: Event, frame: Frame, at: float, extra: dict[str, Any] | None = None
    ) -> Event:
        seq = self.next_seq
        ref = self.layout.frame_ref(seq)
        # The frame file first: a line must never name a frame that is not on disk.
        self.frames.write(frame, self.layout.frame(seq), fsync=self.settings.fsync)
        final = event.model_copy(update={"timestamp": wall_clock(at), "screenshot": ref})
        self.manifest.append(seq, final, extra)
        self.next_seq = seq + 1
        self.counts[final.kind.value] += 1
        self.frames.refresh()
        if self._on_event is not None:
            try:
                self._on_event(seq, final)
            except Exception:  # a watcher must not break the recording
                log.exception("on_event callback raised; ignored")
        return final


def thin_path(
    points: Sequence[tuple[int, int, float]], tolerance: float
) -> list[tuple[int, int, float]]:
    """``points`` without those within ``tolerance`` of the line through their neighbours.

    Ramer-Douglas-Peucker: the first and last points always stay; a straight drag keeps
    two, a curve the points that give its shape.
    """
    if len(points) <= 2:
        return list(points)
    (x0, y0, _), (x1, y1, _) = points[0], points[-1]
    length = math.dist((x0, y0), (x1, y1))
    far, index = -1.0, 0
    for position, (x, y, _) in enumerate(points[1:-1], start=1):
        if length == 0:
            distance = math.dist((x, y), (x0, y0))
        else:
            distance = abs((x1 - x0) * (y0 - y) - (x0 - x) * (y1 - y0)) / length
        if distance > far:
            far, index = distance, position
    if far <= tolerance:
        return [points[0], points[-1]]
    head = thin_path(points[: index + 1], tolerance)
    return head[:-1] + thin_path(points[index:], tolerance)
