"""The keyboard of an X display as XTest types on it: chords, texts, and the keycodes
that type characters off the display's keyboard map.

Keys not on the map (``é``, ``€``, ``東`` on a US map) are typed by mapping their keysym
to a spare keycode (Xvfb has about 18). Apps look keys up with the map they hold when
they handle them, fetch a changed map lazily, and drop a change that arrives while they
fetch. :meth:`Keyboard.type` therefore types a text in chunks that use at most half
the spare keycodes; before a chunk's change it waits until the focused app answered a ping
(:class:`~viewfinder.xvfb.app_pings.AppPings`) sent after the keys before, makes the
change in one request where the codes run contiguously, and pings again so the app has
taken the change in before the first key that needs it. Mappings stay until a keycode
is needed for another keysym or :meth:`Keyboard.restore` is called (restoring right
after the key would make clients see an empty key).
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from Xlib import X
from Xlib.ext import xtest

from viewfinder.core.errors import ActionError
from viewfinder.xvfb.app_pings import PONG_TIMEOUT_S, AppPings

#: The pause before changing a keycode when no app can be asked whether it handled
#: the keys typed with it (no focus, or an app that let a ping go unanswered).
UNANSWERED_WAIT_S = 0.05
SHIFT_KEYSYM = 0xFFE1  # Shift_L
#: Keys typed between two flushes of the output buffer.
FLUSH_EVERY = 512


@contextlib.contextmanager
def no_autorepeat(conn: Any) -> Iterator[None]:
    """Keys sent on ``conn`` meanwhile never autorepeat.

    A loaded server can stall between a key's press and its release for longer than
    the autorepeat delay, and then types the key twice: keys sent as press and release
    never repeat. The server handles the keys before the request that turns repeating
    back on, so none of them repeats after it either.
    """
    repeating = bool(conn.get_keyboard_control().global_auto_repeat)
    if repeating:
        conn.change_keyboard_control(auto_repeat_mode=X.AutoRepeatModeOff)
    try:
        yield
    finally:
        if repeating:
            conn.change_keyboard_control(auto_repeat_mode=X.AutoRepeatModeOn)


class Keyboard:
    """The keysym-to-keycode choices of one X connection (``conn``) on ``display_name``,
    and the pings (from ``pings``) that say when a remapped code may change. Not
    thread-safe: :class:`~viewfinder.xvfb.input.XInput` calls it under its lock."""

    def __init__(self, conn: Any, display_name: str, pings: Callable[[], AppPings]) -> None:
        self._conn = conn
        self._display_name = display_name
        self._pings = pings
        self._spares: list[int] | None = None
        self._remapped: OrderedDict[int, int] = OrderedDict()  # keysym -> keycode, LRU order
        self._last_ping: dict[int, int | None] = {}  # remapped code -> ping sent after its use
        #: False once the focused app let a ping go unanswered.
        self.app_answers = True

    def press_chord(self, keysyms: Sequence[int]) -> list[int]:
        """Press the keys of ``keysyms`` in order (Shift too for a keysym on the shifted
        level); the keycodes pressed, to release in reverse."""
        pressed: list[int] = []
        for keysym in keysyms:
            code, shifted = self._keycode(keysym)
            # "ctrl+A" or "ctrl+exclam": the keysym sits on the shift level (as in xdotool)
            if shifted and SHIFT_KEYSYM not in keysyms:
                shift = self._keycode(SHIFT_KEYSYM)[0]
                if shift not in pressed:
                    xtest.fake_input(self._conn, X.KeyPress, shift)
                    pressed.append(shift)
            xtest.fake_input(self._conn, X.KeyPress, code)
            pressed.append(code)
        return pressed

    def type(self, keysyms: list[int]) -> None:
        """Type ``keysyms`` in order, each pressed and released (Shift around those on
        the shifted level), in chunks as the module docstring says.

        Time grows linearly with the length: requests go out in batches of
        :data:`FLUSH_EVERY` keys.
        """
        shift = self._keycode(SHIFT_KEYSYM)[0]
        sent = 0
        start = 0
        while start < len(keysyms):
            end, remapped = self._next_chunk(keysyms, start)
            if remapped:
                self._map_for_chunk(remapped)
            for keysym in keysyms[start:end]:
                code, shifted = self._keycode(keysym)
                if shifted:
                    xtest.fake_input(self._conn, X.KeyPress, shift)
                xtest.fake_input(self._conn, X.KeyPress, code)
                xtest.fake_input(self._conn, X.KeyRelease, code)
                if shifted:
                    xtest.fake_input(self._conn, X.KeyRelease, shift)
                sent += 1
                if sent % FLUSH_EVERY == 0:
                    # python-xlib joins its output buffer by copying: unflushed, a long
                    # text costs time in the square of its length
                    self._conn.flush()
            if remapped:
                self._ping_after([self._remapped[keysym] for keysym in remapped])
            start = end

    def restore(self) -> None:
        """Give the spare keycodes their empty mapping back (once the focused app read
        the map its last keys were typed with)."""
        for code in self._remapped.values():
            self._await_handled(code)
            self._conn.change_keyboard_mapping(code, [(X.NoSymbol, X.NoSymbol)])
        self._remapped.clear()
        self._conn.sync()

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
        number = self._pings().send()
        for code in codes:
            self._last_ping[code] = number

    def ping_after_remapped(self, codes: Sequence[int]) -> None:
        remapped = set(codes) & set(self._remapped.values())
        if remapped:  # a chord with a key off the keymap (XF86AudioMute on a bare map)
            self._ping_after(remapped)

    def _await_all_handled(self) -> None:
        """Wait until the app answered the last ping sent (handled every key before)."""
        sent = [number for number in self._last_ping.values() if number is not None]
        if sent:
            timeout = PONG_TIMEOUT_S if self.app_answers else UNANSWERED_WAIT_S
            self.app_answers = self._pings().wait(max(sent), timeout)
        elif self._last_ping:  # keys typed while no window had the focus
            time.sleep(UNANSWERED_WAIT_S)
        self._last_ping.clear()

    def _await_handled(self, code: int) -> None:
        """Wait until the app handled the keys last typed with ``code``."""
        if code not in self._last_ping:
            return  # never typed with
        number = self._last_ping.pop(code)
        if number is None:  # no window had the focus: nothing to ask
            time.sleep(UNANSWERED_WAIT_S)
            return
        timeout = PONG_TIMEOUT_S if self.app_answers else UNANSWERED_WAIT_S
        self.app_answers = self._pings().wait(number, timeout)

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
                f"the keyboard map of {self._display_name} has no spare keycode to type "
                "characters it lacks; type only characters on its layout"
            )
        return self._spares
