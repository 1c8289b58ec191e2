"""The Recorder: pairs every action with the screenshot taken just before it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from viewfinder.core import CaptureBackend, Event
from viewfinder.recorder.actions import CLICK_KINDS, ProgrammaticActions
from viewfinder.recorder.errors import RecorderError, RecorderStateError, RecordingFailedError
from viewfinder.recorder.frames import FrameStore
from viewfinder.recorder.keys import classify
from viewfinder.recorder.layout import SessionLayout
from viewfinder.recorder.pairing import Pairing, PairingSettings
from viewfinder.recorder.pointer_elements import PointerElements
from viewfinder.recorder.run import ActiveRun, RecordingSummary, RunOptions, close_run, open_run
from viewfinder.recorder.sources import InputSource, ProgrammaticInput

log = logging.getLogger(__name__)

_BUTTON_NAMES = {1: "left", 2: "middle", 3: "right"}
#: X wheel buttons as (dx, dy) wheel clicks; positive is right/down.
_WHEEL = {4: (0, -1), 5: (0, 1), 6: (-1, 0), 7: (1, 0)}
State = Literal["new", "recording", "stopping", "stopped"]


class Recorder(ProgrammaticActions):
    """Record actions on a screen, each with the frame from just before it.

    >>> with Recorder("session", "xvfb", backend_options={"display": ":1"},
    ...               input_source=X11RecordInput(":1")):        # doctest: +SKIP
    ...     input("recording; press Enter to stop")

    ``backend`` is a capture backend, or its name (with ``backend_options``) for
    :func:`viewfinder.core.get_backend`, or None for the best available one; one given
    by name is closed on stop, one passed in stays open. ``input_source`` listens for a
    person's input (:mod:`viewfinder.recorder.sources`); without one only what the
    program records itself (:meth:`click`, :meth:`type`, ...) is recorded. Time
    arguments ``at`` are :func:`time.monotonic` instants (default: now). The session
    folder and the manifest format are described in docs/recorder.md.

    On an X display with an accessibility bus each pointer action's line names the
    element under its point (:mod:`viewfinder.recorder.pointer_elements`);
    ``elements=False`` turns that off.
    """

    def __init__(
        self,
        session_dir: str | Path,
        backend: CaptureBackend | str | None = None,
        *,
        input_source: InputSource | None = None,
        interval: float = 0.5,
        resume: bool = False,
        backend_options: Mapping[str, Any] | None = None,
        settings: PairingSettings | None = None,
        on_event: Callable[[int, Event], Any] | None = None,
        elements: bool = True,
    ) -> None:
        if not interval > 0:
            raise ValueError(f"interval must be a positive number of seconds, got {interval!r}")
        self.session_dir = Path(session_dir)
        self.interval = float(interval)
        self.resume = resume
        self.input_source: InputSource = input_source or ProgrammaticInput()
        self.settings = settings or PairingSettings()
        self._options = RunOptions(
            session_dir=self.session_dir,
            backend=backend,
            backend_options=dict(backend_options or {}),
            resume=resume,
            interval=self.interval,
            input_source=self.input_source.name,
            settings=self.settings,
            on_event=on_event,
            on_failure=self._fail,
            elements=elements,
        )
        self._lock = threading.RLock()
        self._timer = threading.Condition(self._lock)
        self._attention = threading.Event()  # set on stop or failure: wait() returns
        self._finished = threading.Event()  # set when stop() has completed
        self._state: State = "new"
        self._accepting = False
        self._error: BaseException | None = None
        self._run: ActiveRun | None = None
        self._timer_thread: threading.Thread | None = None
        self._summary: RecordingSummary | None = None

    # -- lifetime ------------------------------------------------------------------

    def start(self) -> Recorder:
        """Open the session folder, capture the first frame, start listening; returns self.

        Raises :class:`~viewfinder.recorder.errors.SessionExistsError` for a folder that
        already holds a recording (unless ``resume``), backend errors (unknown backend,
        display not running) and :class:`~viewfinder.recorder.errors.SessionWriteError`
        for a folder that cannot be written.
        """
        with self._lock:
            if self._state != "new":
                raise RecorderStateError(
                    f"this recorder is {self._state}; a Recorder records once. Create a "
                    "new one (with resume=True to add to the same folder)"
                )
            self._run = open_run(self._options)
            self._run.pairing.releases_reported = bool(
                getattr(self.input_source, "reports_releases", False)
            )
            self._state, self._accepting = "recording", True
        self._timer_thread = threading.Thread(
            target=self._flush_when_due, name="viewfinder-recorder-timer", daemon=True
        )
        self._timer_thread.start()
        try:
            self.input_source.start(self)
        except BaseException:
            run = self._run
            self.stop()
            if run is not None and run.pairing.next_seq == run.first_seq:
                run.folder.discard()  # a failed start must not leave a "recording" behind
            raise
        return self

    def stop(self) -> RecordingSummary:
        """Stop listening, write what is pending, close the folder; return a summary.

        Idempotent: stopping again returns the same summary. A recording that failed
        (display gone, disk full) stops cleanly too; the summary carries the error.
        Stopping a recorder that never started raises :class:`RecorderStateError`.
        """
        with self._lock:
            if self._state == "new":
                raise RecorderStateError("this recorder was never started; nothing to stop")
            first = self._state == "recording"
            if first:
                self._state = "stopping"
        if not first:
            self._finished.wait()
            assert self._summary is not None
            return self._summary
        try:
            self.input_source.stop()  # after this no listener calls arrive
        except Exception as exc:  # the source's failure must not lose the recording
            log.warning("input source %s did not stop cleanly: %s", self.input_source.name, exc)
        run = self._run
        assert run is not None
        with self._lock:
            self._accepting = False
            try:
                run.pairing.flush()
            except RecorderError as exc:
                self._error = self._error or exc
            self._timer.notify_all()
        if self._timer_thread is not None:
            self._timer_thread.join(10)
        run.frames.stop()
        self._summary = close_run(run, self._error)
        with self._lock:
            self._state = "stopped"
        self._attention.set()
        self._finished.set()
        return self._summary

    def __enter__(self) -> Recorder:
        return self.start() if self._state == "new" else self

    def __exit__(self, *exc_info: object) -> None:
        if self._state != "new":
            self.stop()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the recording stops or fails; True if it did within ``timeout``."""
        return self._attention.wait(timeout)

    # -- state ---------------------------------------------------------------------

    @property
    def layout(self) -> SessionLayout:
        return SessionLayout(self.session_dir.expanduser().absolute())

    @property
    def running(self) -> bool:
        """True between start() and stop() while no error has stopped the recording."""
        return self._state == "recording" and self._error is None

    @property
    def error(self) -> BaseException | None:
        """The error that stopped the recording (display gone, disk full, ...), if any."""
        return self._error

    @property
    def events(self) -> int:
        """Events this run has written so far."""
        run = self._run
        return run.pairing.next_seq - run.first_seq if run is not None else 0

    @property
    def pending(self) -> str | None:
        """What waits to be written: ``type``, ``scroll``, ``click`` or None."""
        run = self._run
        return run.pairing.pending_kind if run is not None else None

    @property
    def frames(self) -> FrameStore:
        """The live frame store (its ``stats`` say what the updater did)."""
        return self._active().frames

    @property
    def backend(self) -> CaptureBackend:
        return self._active().backend

    @property
    def elements(self) -> PointerElements | None:
        """What names pointer actions' elements (its ``reads`` keep the latest tree), or
        None when actions are recorded without them."""
        return self._active().elements

    def server_clock(self, display: str) -> Any:
        """The clock that maps X display ``display``'s timestamps for this recording (a
        :class:`~viewfinder.recorder.x11.ServerClock`), or None. An X listener uses it
        for its presses, so a press and a repaint are ordered by the server's own
        timestamps, not by two estimates of its clock's offset."""
        watch = self._active().damage
        if watch is None or watch.display != display:
            return None
        return getattr(watch, "clock", None)

    @property
    def element_source(self) -> str | None:
        """The source naming pointer actions' elements (``"atspi"``), or None."""
        lookups = self._active().elements
        return lookups.source.name if lookups is not None else None

    # -- InputSink: raw presses from listeners ---------------------------------------

    def button_pressed(
        self,
        x: int,
        y: int,
        button: str | int,
        modifiers: Sequence[str] = (),
        at: float | None = None,
    ) -> None:
        """A listener saw a button press (X numbers: 1-3 buttons, 4-7 wheel clicks)."""
        if isinstance(button, int) and button in _WHEEL:
            dx, dy = _WHEEL[button]
            self.scroll(x, y, dx, dy, modifiers=modifiers, at=at)
            return
        name = _BUTTON_NAMES.get(button) if isinstance(button, int) else button
        if name not in CLICK_KINDS:
            return  # back/forward and other extra buttons are not actions we record
        self._apply(lambda pairing, now: pairing.press(x, y, name, modifiers, now), at)

    def button_released(self, x: int, y: int, button: str | int, at: float | None = None) -> None:
        """A listener saw a button go up; the left one ends a drag."""
        if button in (1, "left"):
            self._apply(lambda pairing, now: pairing.release(x, y, now), at)

    def pointer_moved(self, x: int, y: int, at: float | None = None) -> None:
        """A listener saw the pointer move (it matters while the left button is held)."""
        self._apply(lambda pairing, now: pairing.motion(x, y, now), at)

    def key_pressed(
        self, name: str, char: str | None, modifiers: Sequence[str] = (), at: float | None = None
    ) -> None:
        """A listener saw key ``name`` go down, typing ``char`` (None: nothing)."""
        stroke = classify(name, char, modifiers)
        self._apply(lambda pairing, now: pairing.stroke(stroke, now), at)

    def input_failed(self, error: BaseException) -> None:
        """The input source died; the recording stops with ``error``."""
        self._fail(error)

    # -- internals -------------------------------------------------------------------

    def _active(self) -> ActiveRun:
        if self._run is None:
            raise RecorderStateError("the recorder has not been started; call start() first")
        return self._run

    def _apply(self, step: Callable[[Pairing, float], Any], at: float | None) -> Any:
        now = time.monotonic() if at is None else at
        with self._lock:
            if self._error is not None:
                raise RecordingFailedError(self._error)
            if not self._accepting or self._run is None:
                raise RecorderStateError(
                    "the recorder is not recording; call start() first"
                    if self._state == "new"
                    else "the recorder has stopped; start a new one to record more"
                )
            try:
                result = step(self._run.pairing, now)
            except RecorderError as exc:  # a write failed: nothing more can be recorded
                self._fail(exc)
                raise
            self._timer.notify_all()  # the pending deadline may have moved
            return result

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            if self._error is None:
                self._error = error
                log.error("recording into %s stopped: %s", self.session_dir, error)
            self._timer.notify_all()
        self._attention.set()

    def _flush_when_due(self) -> None:
        # Ends pending bursts and clicks whose time is up.
        with self._timer:
            while self._accepting and self._error is None and self._run is not None:
                due = self._run.pairing.deadline()
                now = time.monotonic()
                if due is None or due > now:
                    self._timer.wait(None if due is None else due - now)
                    continue
                try:
                    self._run.pairing.flush()
                except RecorderError as exc:
                    self._fail(exc)

    def __repr__(self) -> str:
        return f"<Recorder {self.session_dir} {self._state} events={self.events}>"
