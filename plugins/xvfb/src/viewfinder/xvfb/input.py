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
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence

from Xlib import X
from Xlib.ext import xtest

from viewfinder.core.errors import ActionError
from viewfinder.core.event import Event, EventKind
from viewfinder.core.geometry import Point
from viewfinder.xvfb.app_pings import PONG_TIMEOUT_S, AppPings
from viewfinder.xvfb.connection import close_quietly, open_display, x_errors
from viewfinder.xvfb.dnd import Drops
from viewfinder.xvfb.handled import HandledCheck
from viewfinder.xvfb.keys import keysym_for_char, keysym_for_name, split_chord
from viewfinder.xvfb.multiclick import CLICK_COUNTS, MULTI_CLICK_GAP_S, PressSpacing

BUTTONS = {"left": 1, "middle": 2, "right": 3}
#: Wheel buttons: X reports scrolling as presses of buttons 4-7.
WHEEL_UP, WHEEL_DOWN, WHEEL_LEFT, WHEEL_RIGHT = 4, 5, 6, 7
_SHIFT_KEYSYM = 0xFFE1  # Shift_L
#: Keys typed between two flushes of the output buffer.
FLUSH_EVERY = 512
#: The pause before changing a keycode when no app can be asked whether it handled
#: the keys typed with it (no focus, or an app that let a ping go unanswered).
_UNANSWERED_WAIT_S = 0.05
#: The longest wait for the app under the pointer to answer a ping after a motion.
_MOTION_PONG_TIMEOUT_S = 0.5


def _chord(keys: str | Sequence[str]) -> list[str]:
    return split_chord(keys) if isinstance(keys, str) else list(keys)


class XInput:
    """XTest input on the X display ``display_name`` (``":N"``); thread-safe.

    Keys not on the display's keyboard map (``é``, ``€``, ``東`` on a US map) are typed
    by mapping their keysym to a spare keycode (Xvfb has about 18). Apps look keys up
    with the map they hold when they handle them, fetch a changed map lazily, and drop
    a change that arrives while they fetch. :meth:`type` therefore splits a text into
    chunks that use at most half the spare keycodes; before a chunk's change it waits
    until the focused app answered a ping (:class:`~viewfinder.xvfb.app_pings.AppPings`)
    sent after the keys before, makes the change in one request where the codes run
    contiguously, and pings again so the app has taken the change in before the first
    key that needs it. Keys never autorepeat while typed. Mappings stay until a keycode
    is needed for another keysym or :meth:`close` / :meth:`restore_keymap` is called
    (restoring right after the key would make clients see an empty key).
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
        self._spares: list[int] | None = None
        self._remapped: OrderedDict[int, int] = OrderedDict()  # keysym -> keycode, LRU order
        self._pings: AppPings | None = None
        self._last_ping: dict[int, int | None] = {}  # remapped code -> ping sent after its use
        self._app_answers = True  # False once the focused app let a ping go unanswered
        self._pointer_app_answers = True  # ... and the app under the pointer
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
        chord = _chord(keys)
        keysyms = [keysym_for_name(name) for name in chord]
        with self._action(), self._no_autorepeat():
            codes = self._press_chord(keysyms)
            for code in reversed(codes):
                self._fake(X.KeyRelease, code)
            self._ping_after_remapped(codes)

    def hold_key(self, keys: str | Sequence[str], duration_s: float) -> None:
        """Hold a chord down for ``duration_s`` seconds, then release it."""
        keysyms = [keysym_for_name(name) for name in _chord(keys)]
        with self._action():
            codes = self._press_chord(keysyms)
            self._sync()
            try:
                self._pause(duration_s)
            finally:
                for code in reversed(codes):
                    self._fake(X.KeyRelease, code)
            self._ping_after_remapped(codes)

    def type(self, text: str) -> None:
        """Type ``text``: any characters, with ``\\n`` as Return and ``\\t`` as Tab.

        Time grows linearly with the length: requests go out in batches of
        :data:`FLUSH_EVERY` keys; a chunk with characters off the keymap waits for the
        focused app to handle the keys before it (see the class docstring).
        """
        keysyms = [keysym_for_char(char) for char in text]
        with self._action(), self._no_autorepeat():
            shift = self._keycode(_SHIFT_KEYSYM)[0]
            sent = 0
            start = 0
            while start < len(keysyms):
                end, remapped = self._next_chunk(keysyms, start)
                if remapped:
                    self._map_for_chunk(remapped)
                for keysym in keysyms[start:end]:
                    code, shifted = self._keycode(keysym)
                    if shifted:
                        self._fake(X.KeyPress, shift)
                    self._fake(X.KeyPress, code)
                    self._fake(X.KeyRelease, code)
                    if shifted:
                        self._fake(X.KeyRelease, shift)
                    sent += 1
                    if sent % FLUSH_EVERY == 0:
                        # python-xlib joins its output buffer by copying: unflushed, a
                        # long text costs time in the square of its length
                        self._conn.flush()
                if remapped:
                    self._ping_after([self._remapped[keysym] for keysym in remapped])
                start = end

    def _next_chunk(self, keysyms: list[int], start: int) -> tuple[int, list[int]]:
        """Where the chunk from ``start`` ends, and the keysyms off the keymap it types.

        A chunk types with at most half the spare keycodes, so the next chunk maps its
        characters to codes this one did not use.
        """
        budget = max(1, len(self._spare_keycodes()) // 2)
        remapped: list[int] = []
        seen: set[int] = set()
        end = start
        while end < len(keysyms):  # by index: slicing the rest per chunk is quadratic
            keysym = keysyms[end]
            if keysym not in seen and (keysym in self._remapped or not self._on_keymap(keysym)):
                if len(remapped) == budget:
                    break
                seen.add(keysym)
                remapped.append(keysym)
            end += 1
        return end, remapped

    def _map_for_chunk(self, keysyms: list[int]) -> None:
        """Give each of ``keysyms`` a keycode (its own when it has one) in one keymap
        change where the spare codes run contiguously, made once the app handled the
        keys before, and handed to the app before the first key that needs it."""
        busy = {self._remapped[keysym] for keysym in keysyms if keysym in self._remapped}
        assigned: dict[int, int] = {}  # code -> keysym
        for keysym in keysyms:
            if keysym in self._remapped:
                self._remapped.move_to_end(keysym)
            else:
                code = self._free_keycode(busy)
                assigned[code] = keysym
                busy.add(code)
        if not assigned:
            return
        # Xlib clients fetch a changed map lazily and drop a change that arrives while
        # they fetch: no change while the app may be reading keys or fetching, and as
        # few changes (MappingNotify events) as can be
        self._await_all_handled()
        for code, keysym in assigned.items():
            self._remapped[keysym] = code
        mapped = {code: keysym for keysym, code in self._remapped.items()}
        for first, last in self._runs(sorted(assigned)):
            rows = [(mapped.get(code, X.NoSymbol),) * 2 for code in range(first, last + 1)]
            self._conn.change_keyboard_mapping(first, rows)
        self._ping_after(assigned)  # the app has taken the change in before the keys come
        self._await_all_handled()

    def _runs(self, codes: list[int]) -> list[tuple[int, int]]:
        """``codes`` (sorted) as ranges whose every code is a spare one."""
        spares = set(self._spare_keycodes())
        runs = [(codes[0], codes[0])]
        for code in codes[1:]:
            first, last = runs[-1]
            if all(between in spares for between in range(last + 1, code)):
                runs[-1] = (first, code)
            else:
                runs.append((code, code))
        return runs

    def _free_keycode(self, busy: set[int]) -> int:
        """A spare keycode outside ``busy``: an unused one, else the least recently
        used one, preferring those whose last keys the app has surely handled."""
        used = set(self._remapped.values())
        for code in self._spare_keycodes():
            if code not in used and code not in busy:
                return code
        for keysym, code in self._remapped.items():  # least recently used first
            if code not in busy:
                del self._remapped[keysym]
                return code
        raise AssertionError("a chunk never needs more keycodes than the spares")

    def _ping_after(self, codes: Iterable[int]) -> None:
        """Ping the focused app after keys typed with ``codes``: once it answers, they
        were handled and the codes may change."""
        # the keys first: the ping goes over another connection, and the server must
        # have queued the keys for the app before it queues the ping
        self._conn.sync()
        number = self._app_pings().send()
        for code in codes:
            self._last_ping[code] = number

    def _ping_after_remapped(self, codes: Sequence[int]) -> None:
        remapped = set(codes) & set(self._remapped.values())
        if remapped:  # a chord with a key off the keymap (XF86AudioMute on a bare map)
            self._ping_after(remapped)

    def _await_all_handled(self) -> None:
        """Wait until the app answered the last ping sent (handled every key before)."""
        sent = [number for number in self._last_ping.values() if number is not None]
        if sent:
            timeout = PONG_TIMEOUT_S if self._app_answers else _UNANSWERED_WAIT_S
            self._app_answers = self._app_pings().wait(max(sent), timeout)
        elif self._last_ping:  # keys typed while no window had the focus
            time.sleep(_UNANSWERED_WAIT_S)
        self._last_ping.clear()

    def _await_handled(self, code: int) -> None:
        """Wait until the app handled the keys last typed with ``code``."""
        if code not in self._last_ping:
            return  # never typed with
        number = self._last_ping.pop(code)
        if number is None:  # no window had the focus: nothing to ask
            time.sleep(_UNANSWERED_WAIT_S)
            return
        timeout = PONG_TIMEOUT_S if self._app_answers else _UNANSWERED_WAIT_S
        self._app_answers = self._app_pings().wait(number, timeout)

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
            if not (self._pointer_app_answers if pointer else self._app_answers):
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
                self._app_answers = False

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
            for code in self._remapped.values():
                self._await_handled(code)
                self._conn.change_keyboard_mapping(code, [(X.NoSymbol, X.NoSymbol)])
            self._remapped.clear()
            self._conn.sync()

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
    def _no_autorepeat(self) -> Iterator[None]:
        # A loaded server can stall between a key's press and its release for longer
        # than the autorepeat delay, and then types the key twice: keys sent as press and
        # release never repeat. The server handles the keys before the request that turns
        # repeating back on, so none of them repeats after it either.
        repeating = bool(self._conn.get_keyboard_control().global_auto_repeat)
        if repeating:
            self._conn.change_keyboard_control(auto_repeat_mode=X.AutoRepeatModeOff)
        try:
            yield
        finally:
            if repeating:
                self._conn.change_keyboard_control(auto_repeat_mode=X.AutoRepeatModeOn)

    @contextlib.contextmanager
    def _held(self, modifiers: Iterable[str]) -> Iterator[None]:
        codes = self._press_chord([keysym_for_name(name) for name in modifiers])
        try:
            yield
        finally:
            for code in reversed(codes):
                self._fake(X.KeyRelease, code)

    def _press_chord(self, keysyms: Sequence[int]) -> list[int]:
        pressed: list[int] = []
        for keysym in keysyms:
            code, shifted = self._keycode(keysym)
            # "ctrl+A" or "ctrl+exclam": the keysym sits on the shift level (as in xdotool)
            if shifted and _SHIFT_KEYSYM not in keysyms:
                shift = self._keycode(_SHIFT_KEYSYM)[0]
                if shift not in pressed:
                    self._fake(X.KeyPress, shift)
                    pressed.append(shift)
            self._fake(X.KeyPress, code)
            pressed.append(code)
        return pressed

    def _keycode(self, keysym: int) -> tuple[int, bool]:
        """The keycode that types ``keysym`` and whether Shift is needed for it."""
        if keysym in self._remapped:
            self._remapped.move_to_end(keysym)
            return self._remapped[keysym], False
        found = self._on_keymap(keysym)
        if found:
            index, code = found[0]
            return code, index == 1
        self._map_for_chunk([keysym])
        return self._remapped[keysym], False

    def _on_keymap(self, keysym: int) -> list[tuple[int, int]]:
        # Index 0 is the plain level, 1 the shifted one; 2 and up need another group.
        return sorted(
            (index, code) for code, index in self._conn.keysym_to_keycodes(keysym) if index < 2
        )

    def _spare_keycodes(self) -> list[int]:
        if self._spares is None:
            info = self._conn.display.info
            first, count = info.min_keycode, info.max_keycode - info.min_keycode + 1
            mapping = self._conn.get_keyboard_mapping(first, count)
            # Highest first: low unused codes (8) are sometimes special to toolkits.
            self._spares = [
                first + offset
                for offset in reversed(range(count))
                if first + offset > 8 and not any(mapping[offset])
            ]
        if not self._spares:
            raise ActionError(
                f"the keyboard map of {self.display_name} has no spare keycode to type "
                "characters it lacks; type only characters on its layout"
            )
        return self._spares

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
            wait = self._spacing.wait_before(code, self._pointer)
            if wait > 0:
                self._pause(wait)
                if self.interrupt is not None and self.interrupt.is_set():
                    raise ActionError("the call was cancelled before its click; nothing pressed")
        self._fake(X.ButtonPress, code)
        self._sync()
        self._spacing.pressed(code, *self._pointer())

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
