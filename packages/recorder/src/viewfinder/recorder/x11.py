"""A real input listener on an X display, through the X RECORD extension.

RECORD hands a client a copy of every device event the server processes (key and button
presses from a keyboard, a mouse, or XTest as xdotool sends them), with the server's
timestamp, without grabbing anything: applications get their input as usual.

Two things were found by measuring on Xvfb (see docs/recorder.md):

- The server does not flush the recording connection after a pointer event that no
  client selected (a click on the bare root window): the data waits until some other
  output is flushed, seconds later. A small round trip on another connection every
  ``nudge_interval`` flushes it, so a press is seen within that time.
- xdotool (and XTest typists such as viewfinder's own) type a character that is not on
  the keymap by remapping a spare keycode to it, pressing it, and remapping it for the
  next one. Looking the keycode up when its press *arrives* gives the mapping of some
  later moment. So the listener records the ``ChangeKeyboardMapping`` requests too, in
  the server's order among the key presses, and applies each to its copy of the keymap:
  every press is resolved with the mapping the application saw. A keymap changed
  another way (``setxkbmap``, XKB requests) shows as a ``MappingNotify`` delivered to
  clients, also recorded: the keymap is read again before the next press.
- Server timestamps are milliseconds of the server's monotonic clock. The listener
  measures the offset to this process's :func:`time.monotonic` once at start, so each
  press is reported with the instant it happened rather than when it arrived; the
  recorder pairs it with the frame captured before that instant. A recorder that
  follows the display's repaints lends its own clock instead (``server_clock``), so
  presses and repaints are mapped with one offset and keep the server's order.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from Xlib import X, Xatom
from Xlib.display import Display as XDisplay
from Xlib.error import ConnectionClosedError, DisplayError
from Xlib.ext import record
from Xlib.protocol import rq

from viewfinder.core import DisplayGoneError
from viewfinder.recorder.errors import InputSourceError, RecorderError
from viewfinder.recorder.keymap import Keymap
from viewfinder.recorder.sources import InputSink

log = logging.getLogger(__name__)

_WRAP = 1 << 32  # X timestamps are 32-bit milliseconds


class ServerClock:
    """Maps X server timestamps to this process's monotonic clock."""

    #: Samples taken by :meth:`measure`; the one with the shortest round trip is kept.
    SAMPLES = 5

    def __init__(self, offset_ms: int, uncertainty_ms: float = 0.0) -> None:
        self.offset_ms = offset_ms  # local monotonic ms minus server ms
        #: How far off the offset may be: half the round trip it was measured in, plus
        #: the server clock's millisecond steps.
        self.uncertainty_ms = uncertainty_ms

    @classmethod
    def measure(cls, conn: XDisplay, samples: int = SAMPLES) -> ServerClock:
        """Server timestamps from property changes on a window of our own.

        A timestamp is known only to lie within the round trip that fetched it; on a
        busy machine one round trip can take tens of ms. So several are taken and the
        shortest kept, as NTP does.
        """
        root = conn.screen().root
        window = root.create_window(
            0,
            0,
            1,
            1,
            0,
            0,
            window_class=X.InputOnly,
            visual=X.CopyFromParent,
            event_mask=X.PropertyChangeMask,
        )
        atom = conn.intern_atom("_VIEWFINDER_RECORDER_CLOCK")
        best: tuple[float, int] | None = None  # (round trip ms, offset ms)
        for _ in range(max(1, samples)):
            before = time.monotonic()
            window.change_property(atom, Xatom.STRING, 8, b"t")
            conn.flush()
            while True:
                event = conn.next_event()
                if event.type == X.PropertyNotify and event.window == window:
                    break
            after = time.monotonic()
            local_ms = round((before + after) * 500)
            sample = ((after - before) * 1000, (local_ms - event.time) % _WRAP)
            if best is None or sample[0] < best[0]:
                best = sample
        window.destroy()
        conn.flush()
        assert best is not None
        return cls(best[1], best[0] / 2 + 1)

    def at(self, server_ms: int) -> float:
        """The monotonic instant of a server timestamp (never later than now)."""
        now = time.monotonic()
        now_ms = round(now * 1000)
        lag = (now_ms - self.offset_ms - server_ms) % _WRAP
        if lag >= _WRAP // 2:  # "in the future": the estimate was a little off
            self.offset_ms = (self.offset_ms - (_WRAP - lag)) % _WRAP
            return now
        if lag > 60_000:  # nonsense for a live event; trust the arrival time
            return now
        return now - lag / 1000


class X11RecordInput:
    """Listens to every key and button press on X display ``display`` (``":N"``).

    Needs the RECORD extension, which Xvfb and Xorg enable by default.
    """

    name = "x11"
    #: button releases and pointer motion reach the sink too: drags are recorded
    reports_releases = True

    def __init__(self, display: str, *, nudge_interval: float = 0.05) -> None:
        self.display = display
        self.nudge_interval = nudge_interval
        self._conns: list[XDisplay] = []
        self._control: XDisplay | None = None
        self._context: int | None = None
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._sink: InputSink | None = None
        self.events_seen = 0
        # keycode ranges of the ChangeKeyboardMapping requests applied lately: their
        # MappingNotify needs no re-read (it could only fetch a later mapping)
        self._applied: deque[tuple[int, int]] = deque(maxlen=32)
        self._keymap_stale = False

    # -- InputSource -------------------------------------------------------------------

    def start(self, sink: InputSink) -> None:
        """Connect, check RECORD, measure the clock and start listening."""
        if self._threads:
            raise InputSourceError("this x11 input source is already listening")
        self._sink = sink
        try:
            control, recording, nudging = (self._connect() for _ in range(3))
            if not control.has_extension("RECORD"):
                raise InputSourceError(
                    f"X display {self.display} has no RECORD extension, so its input cannot "
                    "be observed; start Xvfb/Xorg without '-extension RECORD'"
                )
            self._control = control
            self.keymap = Keymap(control)
            # The recorder's clock when it has one for this display: the frames and the
            # elements compare presses with repaints it timed.
            shared = getattr(sink, "server_clock", None)
            clock = shared(self.display) if callable(shared) else None
            self.clock = clock if isinstance(clock, ServerClock) else ServerClock.measure(control)
            self._context = control.record_create_context(0, [record.AllClients], [_DEVICE_PRESSES])
            control.sync()
        except (ConnectionClosedError, DisplayError, OSError) as exc:
            self._close()
            raise DisplayGoneError(f"X display {self.display} stopped answering: {exc}") from exc
        except BaseException:
            self._close()
            raise
        self._stopping.clear()
        listener = threading.Thread(
            target=self._listen, args=(recording,), name="viewfinder-x11-record", daemon=True
        )
        nudger = threading.Thread(
            target=self._nudge, args=(nudging,), name="viewfinder-x11-nudge", daemon=True
        )
        self._threads = [listener, nudger]
        listener.start()
        nudger.start()

    def stop(self) -> None:
        """Stop listening and close the connections (idempotent).

        Presses the server had already intercepted are still delivered: disabling the
        context makes the server send what it holds, then end the data.
        """
        self._stopping.set()
        control, context = self._control, self._context
        if control is not None and context is not None:
            with contextlib.suppress(Exception):  # the display may be gone
                control.record_disable_context(context)
                control.flush()
        for thread in self._threads:
            thread.join(5)
        if control is not None and context is not None:
            with contextlib.suppress(Exception):
                control.record_free_context(context)
                control.flush()
        self._context = None
        self._threads = []
        self._sink = None
        self._close()

    # -- threads ---------------------------------------------------------------------

    def _listen(self, conn: XDisplay) -> None:
        try:
            conn.record_enable_context(
                self._context, lambda reply: self._on_reply(reply, conn.display)
            )
        except Exception as exc:  # the display went away (or python-xlib choked)
            if not self._stopping.is_set() and self._sink is not None:
                self._sink.input_failed(
                    DisplayGoneError(
                        f"lost the X display {self.display} while listening for input: "
                        f"{exc!r}; what was recorded so far is intact"
                    )
                )

    def _nudge(self, conn: XDisplay) -> None:
        # A round trip makes the server flush pending output, the RECORD data included.
        while not self._stopping.wait(self.nudge_interval):
            try:
                conn.get_input_focus()
            except Exception:  # the listener thread reports a lost display
                return

    def _on_reply(self, reply: Any, parser: Any) -> None:
        if reply.client_swapped:
            return  # another byte order: only on a remote display of another machine
        if reply.category == record.FromClient:
            self._on_requests(reply.data)
            return
        if reply.category != record.FromServer:
            return
        data = reply.data
        if not data or data[0] < 2:
            return
        while len(data):
            event, data = rq.EventField(None).parse_binary_value(data, parser, None, None)
            self._handle(event)

    def _on_requests(self, data: bytes) -> None:
        # Only ChangeKeyboardMapping is recorded (see _RECORDED): opcode, keycode count,
        # length in 4-byte units, first keycode, keysyms per keycode, 2 unused, keysyms.
        while len(data) >= 8:
            length = int.from_bytes(data[2:4], sys.byteorder) * 4
            if length < 8 or length > len(data):
                return
            if data[0] == _CHANGE_KEYBOARD_MAPPING:
                count, first, per_keycode = data[1], data[4], data[5]
                body = data[8 : 8 + count * per_keycode * 4]
                keysyms = [
                    int.from_bytes(body[i : i + 4], sys.byteorder) for i in range(0, len(body), 4)
                ]
                self.keymap.apply_change(first, per_keycode, keysyms)
                self._applied.append((first, count))
            data = data[length:]

    def _handle(self, event: Any) -> None:
        sink = self._sink
        if sink is None:
            return
        if event.type == X.MappingNotify:  # it has no time: it only marks the keymap
            changed = (event.first_keycode, event.count)
            if event.request != X.MappingKeyboard or changed not in self._applied:
                self._keymap_stale = True
            return
        at = self.clock.at(event.time)
        try:
            if event.type == X.ButtonPress:
                self.events_seen += 1
                sink.button_pressed(
                    event.root_x, event.root_y, event.detail, self.keymap.modifiers(event.state), at
                )
            elif event.type == X.ButtonRelease:
                released = getattr(sink, "button_released", None)
                if released is not None:
                    released(event.root_x, event.root_y, event.detail, at)
            elif event.type == X.MotionNotify:
                moved = getattr(sink, "pointer_moved", None)
                if moved is not None:
                    moved(event.root_x, event.root_y, at)
            elif event.type == X.KeyPress:
                self.events_seen += 1
                if self._keymap_stale:
                    self._keymap_stale = False
                    self._refresh_keymap()
                name, char, known = self.keymap.lookup(event.detail, event.state)
                if not known:  # a keycode remapped since start (xdotool does that for é)
                    self._refresh_keymap()
                    name, char, known = self.keymap.lookup(event.detail, event.state)
                if known:
                    sink.key_pressed(name, char, self.keymap.modifiers(event.state), at)
        except RecorderError as exc:  # the recorder stopped or failed; it already knows
            log.debug("input after the recording ended: %s", exc)

    # -- connections -------------------------------------------------------------------

    def _connect(self) -> XDisplay:
        try:
            conn = XDisplay(self.display)
        except (DisplayError, ConnectionClosedError, OSError) as exc:
            raise DisplayGoneError(
                f"cannot listen for input on X display {self.display}: {exc}. Start one with "
                "`viewfinder display start`, or pass the right --display"
            ) from exc
        self._conns.append(conn)
        return conn

    def _refresh_keymap(self) -> None:
        try:
            conn = XDisplay(self.display)
        except Exception:  # the display is going away; the listener will say so
            return
        try:
            self.keymap = Keymap(conn)
        finally:
            with contextlib.suppress(Exception):
                conn.close()

    def _close(self) -> None:
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.close()
        self._conns = []
        self._control = None

    def __repr__(self) -> str:
        return f"<X11RecordInput {self.display}>"


#: The core request that remaps keycodes (xdotool's and XTest typists' spare keycode).
_CHANGE_KEYBOARD_MAPPING = 100
#: Record device events from KeyPress to MotionNotify (keys, buttons, pointer motion: the
#: listener ignores motion unless a button is held) and keymap changes, nothing else.
_DEVICE_PRESSES: dict[str, Sequence[Any] | bool] = {
    "core_requests": (_CHANGE_KEYBOARD_MAPPING, _CHANGE_KEYBOARD_MAPPING),
    "core_replies": (0, 0),
    "ext_requests": (0, 0, 0, 0),
    "ext_replies": (0, 0, 0, 0),
    "delivered_events": (X.MappingNotify, X.MappingNotify),
    "device_events": (X.KeyPress, X.MotionNotify),
    "errors": (0, 0),
    "client_started": False,
    "client_died": False,
}
