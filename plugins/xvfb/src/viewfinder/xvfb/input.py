"""Mouse and keyboard input on an X display through the XTest extension.

>>> display.input.click(200, 120)                 # doctest: +SKIP
>>> display.input.key("ctrl+s")                   # doctest: +SKIP
>>> display.input.type("Grüße, World!\\n")        # doctest: +SKIP

Every action ends with a round trip to the server (``sync``), so when a method
returns the server has carried out the input and queued the events for the clients.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from Xlib import X
from Xlib.ext import xtest

from viewfinder.core.errors import ActionError
from viewfinder.core.event import Event, EventKind
from viewfinder.core.geometry import Point
from viewfinder.xvfb.app_pings import AppPings
from viewfinder.xvfb.connection import close_quietly, open_display, x_errors
from viewfinder.xvfb.dnd import Drops
from viewfinder.xvfb.handled import HandledCheck
from viewfinder.xvfb.keyboard import Keyboard, no_autorepeat
from viewfinder.xvfb.keys import chord_keysyms, keysym_for_char, keysym_for_name
from viewfinder.xvfb.multiclick import CLICK_COUNTS, MULTI_CLICK_GAP_S, PressSpacing

BUTTONS = {"left": 1, "middle": 2, "right": 3}
#: Wheel buttons: X reports scrolling as presses of buttons 4-7.
WHEEL_UP, WHEEL_DOWN, WHEEL_LEFT, WHEEL_RIGHT = 4, 5, 6, 7
#: The longest wait for the app under the pointer to answer a ping after a motion.
_MOTION_PONG_TIMEOUT_S = 0.5


class XInput:
    """XTest input on the X display ``display_name`` (``":N"``); thread-safe.

    Keys not on the display's keyboard map (``é``, ``€``, ``東`` on a US map) are typed
    with spare keycodes mapped to them (:mod:`viewfinder.xvfb.keyboard`), in chunks that
    wait for the focused app to have handled the keys before a change; the mappings stay
    until :meth:`close` or :meth:`restore_keymap`. Keys never autorepeat while typed.
    The first press of a click waits out the double-click time of a press just made
    there (:mod:`viewfinder.xvfb.multiclick`), so separate actions stay separate clicks.
    """

    def __init__(self, display_name: str) -> None:
        self.display_name = display_name
        self._conn = open_display(display_name)
        if not self._conn.has_extension("XTEST"):
            close_quietly(self._conn)
            raise ActionError(
                f"X display {display_name} has no XTEST extension, so input cannot be faked; "
                "use Xvfb (which has it) or enable XTEST on the server"
            )
        self._lock = threading.RLock()
        #: Set, it ends a hold_key's hold or a wait early (a caller that was cancelled).
        self.interrupt: threading.Event | None = None
        self._pings: AppPings | None = None
        self._keys = Keyboard(self._conn, display_name, self._app_pings)
        self._pointer_app_answers = True  # False once the app under the pointer did not answer
        self._drops = Drops(display_name)  # a drag-and-drop's drop where the drag ends
        self._spacing = PressSpacing.of_display(display_name)  # clicks apart: multiclick.py

    # -- pointer ----------------------------------------------------------------------

    def move(self, x: int, y: int) -> None:
        """Move the pointer to ``(x, y)`` on the screen."""
        with self._action():
            self._move(x, y)

    def click(
        self,
        x: int | None = None,
        y: int | None = None,
        button: str = "left",
        count: int = 1,
        modifiers: Sequence[str] = (),
    ) -> None:
        """Click ``button`` ``count`` times at ``(x, y)`` (or where the pointer is),
        holding ``modifiers`` (``["ctrl"]``, ``["shift", "alt"]``) meanwhile."""
        code = self._button(button)
        with self._action(), self._held(modifiers):
            if x is not None and y is not None:
                self._move(x, y)
            for index in range(count):
                if index:  # not interruptible: half a double-click is a wrong click
                    time.sleep(MULTI_CLICK_GAP_S)
                self._press(code, first=not index)
                self._fake(X.ButtonRelease, code)
                self._sync()  # stamped apart: see multiclick.py

    def double_click(self, x: int, y: int, modifiers: Sequence[str] = ()) -> None:
        self.click(x, y, "left", 2, modifiers)

    def triple_click(self, x: int, y: int, modifiers: Sequence[str] = ()) -> None:
        self.click(x, y, "left", 3, modifiers)

    def mouse_down(self, button: str = "left", x: int | None = None, y: int | None = None) -> None:
        """Press ``button`` (at ``(x, y)`` when given) and keep it pressed."""
        code = self._button(button)
        with self._action():
            if x is not None and y is not None:
                self._move(x, y)
            self._drops.pressed()
            self._press(code)

    def mouse_up(self, button: str = "left", x: int | None = None, y: int | None = None) -> None:
        """Release ``button`` (after moving to ``(x, y)`` when given)."""
        code = self._button(button)
        with self._action():
            if x is not None and y is not None:
                self._move(x, y)
            self._drops.releasing(self._move_synced)
            self._fake(X.ButtonRelease, code)

    def drag(
        self,
        start: tuple[int, int],
        end: tuple[int, int],
        button: str = "left",
        steps: int = 5,
        modifiers: Sequence[str] = (),
    ) -> None:
        """Press at ``start``, move to ``end`` in ``steps`` moves, release there.

        The intermediate moves matter: toolkits start a drag only after they saw
        motion with the button held.
        """
        code = self._button(button)
        (x0, y0), (x1, y1) = start, end
        steps = max(1, steps)
        with self._action(), self._held(modifiers):
            self._move(x0, y0)
            self._drops.pressed()
            self._press(code)
            for step in range(1, steps + 1):
                # one motion event per step, not one merged jump
                self._move_synced(x0 + (x1 - x0) * step // steps, y0 + (y1 - y0) * step // steps)
            self._drops.releasing(self._move_synced)
            self._fake(X.ButtonRelease, code)

    def scroll(
        self,
        x: int | None = None,
        y: int | None = None,
        dx: int = 0,
        dy: int = 0,
        modifiers: Sequence[str] = (),
    ) -> None:
        """Scroll ``dy`` wheel clicks down (negative: up) and ``dx`` right (negative: left)."""
        with self._action(), self._held(modifiers):
            if x is not None and y is not None:
                self._move(x, y)
            vertical = WHEEL_DOWN if dy > 0 else WHEEL_UP
            horizontal = WHEEL_RIGHT if dx > 0 else WHEEL_LEFT
            for code, clicks in ((vertical, abs(dy)), (horizontal, abs(dx))):
                for _ in range(clicks):
                    self._fake(X.ButtonPress, code)
                    self._fake(X.ButtonRelease, code)

    # -- keyboard -----------------------------------------------------------------------

    def key(self, keys: str | Sequence[str]) -> None:
        """Press a chord: ``"ctrl+s"``, ``["ctrl", "shift", "t"]``, ``"Return"``, ``"F5"``.

        Keys go down in order and come up in reverse. Unknown names raise
        :class:`~viewfinder.core.ActionError` saying how to name keys.
        """
        keysyms = chord_keysyms(keys)
        with self._action(), no_autorepeat(self._conn):
            codes = self._keys.press_chord(keysyms)
            for code in reversed(codes):
                self._fake(X.KeyRelease, code)
            self._keys.ping_after_remapped(codes)

    def hold_key(self, keys: str | Sequence[str], duration_s: float) -> None:
        """Hold a chord down for ``duration_s`` seconds, then release it."""
        keysyms = chord_keysyms(keys)
        with self._action():
            codes = self._keys.press_chord(keysyms)
            self._sync()
            try:
                self._pause(duration_s)
            finally:
                for code in reversed(codes):
                    self._fake(X.KeyRelease, code)
            self._keys.ping_after_remapped(codes)

    def type(self, text: str) -> None:
        """Type ``text``: any characters, with ``\\n`` as Return and ``\\t`` as Tab.

        Time grows linearly with the length; a chunk with characters off the keymap
        waits for the focused app to handle the keys before it (see the class docstring).
        """
        keysyms = [keysym_for_char(char) for char in text]
        with self._action(), no_autorepeat(self._conn):
            self._keys.type(keysyms)

    def _app_pings(self) -> AppPings:
        if self._pings is None:
            self._pings = AppPings(self.display_name)
        return self._pings

    def await_pointer_app(self, fallback_s: float) -> None:
        """Wait until the app under the pointer has handled the input sent so far.

        A ping sent to its window after the motions is queued behind them, and its
        answer comes once they were handled. It also keeps them apart: toolkits fold a
        motion into the next one queued right behind it (Tk keeps only the last), and a
        corner of a drag's path folded away is a corner the app never saw. An app that
        cannot be asked (over the bare root, or it let a ping go unanswered for
        :data:`_MOTION_PONG_TIMEOUT_S`) gets ``fallback_s`` of sleep instead.
        """
        with self._lock:
            self._conn.sync()  # the motions reach the server before the ping does
            pings = self._app_pings()
            number = pings.send(pings.window_under_pointer()) if self._pointer_app_answers else None
        if number is None:
            time.sleep(fallback_s)
            return
        self._pointer_app_answers = pings.wait(number, _MOTION_PONG_TIMEOUT_S)

    def ask_handled(self, *, pointer: bool) -> HandledCheck | None:
        """Ask the app the input sent so far went to whether it has handled it: a ping
        queued behind that input, to the app under the pointer (``pointer``) or the one
        with the focus. The check tells when the answer comes (see :class:`HandledCheck`).
        None when no app can be asked: over the bare root, no focus, or the app let an
        earlier ping go unanswered."""
        with self._lock:
            if not (self._pointer_app_answers if pointer else self._keys.app_answers):
                return None
            self._conn.sync()  # the input reaches the server before the ping does
            pings = self._app_pings()
            number = pings.send(pings.window_under_pointer() if pointer else None)
        if number is None:
            return None

        def unanswered() -> None:
            if pointer:
                self._pointer_app_answers = False
            else:
                self._keys.app_answers = False

        return HandledCheck(pings, number, unanswered)

    # -- events --------------------------------------------------------------------------

    def perform(self, event: Event) -> None:
        """Carry out one :class:`~viewfinder.core.Event` (any kind in ``EventKind``)."""
        kind = event.kind
        button = event.button or "left"
        x, y = _xy(event.position)
        if kind in CLICK_COUNTS:
            self.click(x, y, button, CLICK_COUNTS[kind], event.modifiers)
        elif kind is EventKind.MOUSE_DOWN:
            with self._action(), self._held(event.modifiers):
                self.mouse_down(button, x, y)
        elif kind is EventKind.MOUSE_UP:
            with self._action(), self._held(event.modifiers):
                self.mouse_up(button, x, y)
        elif kind is EventKind.MOVE:
            with self._action(), self._held(event.modifiers):
                self._move(x, y)  # type: ignore[arg-type]  # MOVE always has a position
        elif kind is EventKind.DRAG:
            assert event.start_position is not None and event.position is not None
            self.drag(
                event.start_position.as_tuple(),
                event.position.as_tuple(),
                button,
                modifiers=event.modifiers,
            )
        elif kind is EventKind.SCROLL:
            self.scroll(x, y, event.scroll_dx, event.scroll_dy, event.modifiers)
        elif kind is EventKind.KEY:
            self.key(event.keys)
        elif kind is EventKind.HOLD_KEY:
            self.hold_key(event.keys, event.duration_s or 0.0)
        elif kind is EventKind.TYPE:
            self.type(event.text or "")
        elif kind is EventKind.WAIT:
            self._pause(event.duration_s or 0.0)
        elif kind is EventKind.SCREENSHOT:
            pass  # nothing to do on the screen; the caller captures
        else:  # pragma: no cover - a new EventKind nobody taught us
            raise ActionError(f"the xvfb backend cannot perform {kind.value!r} events yet")

    def wait_apart(self, event: Event) -> None:
        """Wait until ``event``'s first press (a click, drag or mouse-down) would not be
        taken for the next click of a press just made there (multiclick.py); at once
        for other events. A caller that captures the screen before acting calls it first,
        so the wait does not fall between the capture and the press."""
        if event.kind in CLICK_COUNTS or event.kind in (EventKind.MOUSE_DOWN, EventKind.DRAG):
            point = event.start_position if event.kind is EventKind.DRAG else event.position

            def where() -> tuple[int, int]:  # asked only after a recent press
                if point is not None:
                    return point.as_tuple()
                with self._lock, x_errors(self.display_name):
                    return self._pointer()

            self._wait_apart(self._button(event.button or "left"), where)

    # -- lifetime ------------------------------------------------------------------------

    def _pause(self, seconds: float) -> None:
        interrupt = self.interrupt
        if interrupt is None:
            time.sleep(max(0.0, seconds))
        else:
            interrupt.wait(max(0.0, seconds))

    def restore_keymap(self) -> None:
        """Give the spare keycodes used for unmapped characters back their empty mapping
        (once the focused app read the map its last keys were typed with)."""
        with self._lock, contextlib.suppress(Exception):  # the display may be gone already
            self._keys.restore()

    def close(self) -> None:
        """Restore the keymap and close the X connections (idempotent)."""
        self.restore_keymap()
        with self._lock:
            if self._pings is not None:
                self._pings.close()
                self._pings = None
            self._drops.close()
            close_quietly(self._conn)

    def __enter__(self) -> XInput:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _action(self) -> Iterator[None]:
        # Reentrant: perform() wraps the public methods it calls; the sync at the end of
        # the outermost block is the one that matters.
        with self._lock, x_errors(self.display_name):
            yield
            self._sync()

    @contextlib.contextmanager
    def _held(self, modifiers: Iterable[str]) -> Iterator[None]:
        codes = self._keys.press_chord([keysym_for_name(name) for name in modifiers])
        try:
            yield
        finally:
            for code in reversed(codes):
                self._fake(X.KeyRelease, code)

    def _button(self, button: str) -> int:
        try:
            return BUTTONS[button]
        except KeyError:
            raise ActionError(
                f"unknown mouse button {button!r}; use left, middle or right"
            ) from None

    def _press(self, code: int, first: bool = True) -> None:
        """Press button ``code`` where the pointer is, synced; a ``first`` press waits out
        the double-click time of a recent press there first (multiclick.py)."""
        if first:
            self._wait_apart(code, self._pointer)
        self._fake(X.ButtonPress, code)
        self._spacing.pressed(code, *self._pointer())  # a round trip: the press is synced

    def _wait_apart(self, code: int, where: Callable[[], tuple[int, int]]) -> None:
        wait = self._spacing.wait_before(code, where)
        if wait > 0:
            self._pause(wait)
            if self.interrupt is not None and self.interrupt.is_set():
                raise ActionError("the call was cancelled before its click; nothing pressed")

    def _pointer(self) -> tuple[int, int]:
        reply = self._conn.screen().root.query_pointer()
        return int(reply.root_x), int(reply.root_y)

    def _move(self, x: int, y: int) -> None:
        xtest.fake_input(self._conn, X.MotionNotify, x=int(x), y=int(y))
        self._drops.moved(int(x), int(y))

    def _move_synced(self, x: int, y: int) -> None:
        self._move(x, y)
        self._sync()

    def _fake(self, event_type: int, detail: int) -> None:
        xtest.fake_input(self._conn, event_type, detail)

    def _sync(self) -> None:
        self._conn.sync()


def _xy(point: Point | None) -> tuple[int | None, int | None]:
    return (point.x, point.y) if point is not None else (None, None)
