"""The live frame: captured every interval, kept on disk and in a short history.

A background thread captures the screen every ``interval`` seconds (and at once when
asked to refresh) and replaces ``screenshots/current_screenshot.png`` atomically. What
it costs was measured (benchmarks/recorder.py): reading an Xvfb framebuffer takes a
millisecond or two, encoding a busy 1920x1080 PNG a hundred. So, for a backend that
hands out raw images, the updater encodes only what changed
(:mod:`viewfinder.recorder.incremental_png`): on a still screen a tick costs one grab
and one comparison, and the file's modification time is bumped so readers can still see
it is fresh; when a clock ticks, only its band of rows is compressed again.

Each frame is also kept (encoded) in a short history with the monotonic time of the
capture that first saw it: every frame of the last 2 seconds (at most 64), and at
least ``history`` frames. An action is paired with the newest frame captured before
the action happened, not simply the newest frame: an input event reaches the recorder a
little after the application under it has reacted, and a capture in between would
otherwise show the action's result as its "before".

On an X display the store follows repaints (:mod:`viewfinder.recorder.damage`): each one
triggers a capture, and before an action's frame is chosen the store makes sure it has
captured after the last repaint that happened before the action. A capture taken after
the action still serves as its "before" when no repaint happened in between. A still
screen then costs no grab at all: a tick only bumps the file's modification time.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.core import CaptureBackend, Screenshot, publish_screenshot
from viewfinder.recorder.durable import write_atomic
from viewfinder.recorder.errors import RecorderStateError
from viewfinder.recorder.incremental_png import IncrementalPngEncoder

log = logging.getLogger(__name__)
#: How far an action's instant, estimated from X server timestamps, may be off (seconds).
_CLOCK_MARGIN = 0.010
#: Frames captured this recently stay available to :meth:`FrameStore.frame_before`...
_KEEP_SECONDS = 2.0
#: ...up to this many (memory stays bounded when the screen repaints non-stop).
_MAX_HISTORY = 64


@dataclass
class Frame:
    """One distinct screen image (PNG bytes) and when it was seen."""

    data: bytes = field(repr=False)
    width: int
    height: int
    #: monotonic time at which the capture that first showed these pixels started
    first_seen: float
    #: monotonic time of the latest capture that found the very same pixels
    last_seen: float
    #: ``first_seen`` as seconds since the epoch (stamped on frozen frame files)
    wall_time: float

    @property
    def captured_at(self) -> datetime:
        return datetime.fromtimestamp(self.wall_time, UTC)


@dataclass
class UpdaterStats:
    """What the updater has done (the benchmark reads these)."""

    captures: int = 0
    writes: int = 0
    unchanged: int = 0
    #: ticks that needed no grab: no repaint since the last capture (damage watch)
    still: int = 0
    grab_s: float = 0.0
    encode_s: float = 0.0


class _FrameSource:
    """Reads frames from a backend: PNG bytes, or None when nothing changed."""

    def __init__(self, backend: CaptureBackend) -> None:
        self.backend = backend
        grab = getattr(backend, "grab", None)
        # A backend that hands out raw images (the xvfb one reads its framebuffer without
        # an X request) lets us encode only the rows that changed, and nothing at all on
        # a still screen.
        self.raw = callable(grab)
        self._grab: Callable[[], Image.Image] | None = grab if self.raw else None
        self._encoder = IncrementalPngEncoder()
        self._last: bytes | None = None

    def read(self, stats: UpdaterStats) -> tuple[bytes | None, int, int]:
        started = time.monotonic()
        if self._grab is not None:
            image = self._grab()
            grabbed = time.monotonic()
            png = self._encoder.encode(image)
            width, height = image.size
        else:
            shot = self.backend.capture(format="png")
            grabbed = time.monotonic()
            png = None if shot.data == self._last else shot.data
            width, height = shot.width, shot.height
            if png is not None:
                self._last = png
        stats.grab_s += grabbed - started
        stats.encode_s += time.monotonic() - grabbed
        return png, width, height


class FrameStore:
    """Keeps ``current_screenshot.png`` fresh and remembers the recent frames.

    ``lock`` is held while the current file is replaced and while a frame is frozen, so
    a freeze never interleaves with a write. ``on_failure(exc)`` is called (from the
    updater thread) when a capture or a write fails; the updater then stops and the last
    good frames stay available.
    """

    def __init__(
        self,
        backend: CaptureBackend,
        current_path: Path,
        interval: float,
        *,
        on_failure: Callable[[BaseException], None] | None = None,
        history: int = 4,
        context: dict[str, Any] | None = None,
    ) -> None:
        self.backend = backend
        self.current_path = current_path
        self.interval = interval
        self.lock = threading.Lock()
        self.stats = UpdaterStats()
        self._source = _FrameSource(backend)
        self._publish = self._source.raw
        self._context = {"backend": backend.name, **(context or {})}
        self._on_failure = on_failure
        self._keep = max(2, history)
        self._history: deque[Frame] = deque(maxlen=_MAX_HISTORY)
        self._wake = threading.Condition()
        self._refresh = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        #: monotonic instants of the repaints reported (empty without a damage watch)
        self._damage: deque[float] = deque(maxlen=1024)
        self._watch: Any = None
        self._last_capture = 0.0

    # -- lifetime ------------------------------------------------------------------

    def start(self) -> Frame:
        """Capture the first frame (errors raise here) and start the updater thread."""
        if self._thread is not None:
            raise RecorderStateError("the frame updater is already running")
        self._capture_once(time.monotonic())
        self._thread = threading.Thread(
            target=self._run, name=f"viewfinder-recorder-frames {self.current_path}", daemon=True
        )
        self._thread.start()
        return self.latest

    def follow_damage(self, watch: Any) -> None:
        """Capture on the repaints ``watch`` reports (a started :class:`DamageWatch`)."""
        self._watch = watch

    @property
    def follows_damage(self) -> bool:
        """True when captures follow the display's repaints (an X display with DAMAGE)."""
        return self._watch is not None

    def damaged(self, at: float) -> None:
        """A repaint happened at monotonic instant ``at``: capture it (from the watch)."""
        with self._wake:
            self._damage.append(at)
            self._refresh = True
            self._wake.notify_all()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the updater thread (idempotent); the frames stay readable."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def refresh(self) -> None:
        """Ask for a capture now instead of at the next tick (returns at once)."""
        with self._wake:
            self._refresh = True
            self._wake.notify_all()

    # -- frames --------------------------------------------------------------------

    @property
    def latest(self) -> Frame:
        with self.lock:
            if not self._history:
                raise RecorderStateError("no frame has been captured yet; start() first")
            return self._history[-1]

    def frame_before(self, at: float) -> Frame:
        """The screen as it was at monotonic time ``at``.

        Without a damage watch: the newest frame whose capture started at or before
        ``at``. With one: first a capture after the last repaint before ``at``, then the
        newest frame captured before ``at``, or after it with no repaint in between.
        """
        if self._watch is not None:
            self._catch_up(at)
        with self.lock:
            if not self._history:
                raise RecorderStateError("no frame has been captured yet; start() first")
            if self._watch is None:
                for frame in reversed(self._history):
                    if frame.first_seen <= at:
                        return frame
                return self._history[0]
            # Repaints and listener actions carry the server's clock, so "a repaint after
            # the action" is exact; a capture's own instant is this process's, and the two
            # clocks agree within a few ms. A frame captured before the action serves
            # unless a repaint after the action may have reached it; one captured after
            # serves if nothing was repainted from just before the action until then.
            damage = list(self._damage)
            clock = getattr(self._watch, "clock", None)
            margin = _CLOCK_MARGIN + getattr(clock, "uncertainty_ms", 0.0) / 1000
            for frame in reversed(self._history):
                seen = frame.first_seen
                if seen <= at:
                    if not any(at <= moment <= seen + margin for moment in damage):
                        return frame
                elif not any(at - margin <= moment <= seen for moment in damage):
                    return frame
            # The action predates every frame we still hold: the oldest is the closest.
            return self._history[0]

    def _catch_up(self, at: float, timeout: float = 1.0) -> None:
        # Every repaint before `at` must be known, and captured.
        watch = self._watch
        watch.sync()
        deadline = time.monotonic() + timeout
        with self._wake:
            before = [moment for moment in self._damage if moment <= at]
            if before:
                last = before[-1]
                while self._last_capture < last and not self._stopping:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._thread is None:
                        break
                    self._refresh = True
                    self._wake.notify_all()
                    self._wake.wait(remaining)
        watch.sync()  # repaints that happened while capturing are known too

    def write(self, frame: Frame, path: Path, *, fsync: bool = False) -> None:
        """Write ``frame`` to ``path`` atomically (a frozen copy; never a rename)."""
        with self.lock:
            write_atomic(path, frame.data, fsync=fsync, mtime=frame.wall_time)

    # -- the updater -----------------------------------------------------------------

    def _run(self) -> None:
        due = time.monotonic() + self.interval
        while True:
            with self._wake:
                while not self._stopping and not self._refresh:
                    remaining = due - time.monotonic()
                    if remaining <= 0:
                        break
                    self._wake.wait(remaining)
                if self._stopping:
                    return
                asked, self._refresh = self._refresh, False
                still = (
                    not asked
                    and self._watch is not None
                    and not any(moment >= self._last_capture for moment in self._damage)
                )
            started = time.monotonic()
            if still:
                # No repaint since the last capture: the screen is that capture.
                with self.lock:
                    self._history[-1].last_seen = started
                self.stats.still += 1
                self._touch_current()
                due = started + self.interval
                continue
            try:
                self._capture_once(started)
            except Exception as exc:  # any capture or write failure ends the updater
                self.error = exc
                log.warning("frame updater stopped: %s", exc)
                if self._on_failure is not None:
                    self._on_failure(exc)
                return
            due = started + self.interval

    def _capture_once(self, started: float) -> None:
        try:
            self._read_frame(started)
        finally:
            with self._wake:
                self._last_capture = max(self._last_capture, started)
                self._wake.notify_all()

    def _read_frame(self, started: float) -> None:
        data, width, height = self._source.read(self.stats)
        self.stats.captures += 1
        if data is None:
            with self.lock:
                self._history[-1].last_seen = started
            self.stats.unchanged += 1
            self._touch_current()
            return
        wall = time.time() - (time.monotonic() - started)
        frame = Frame(data, width, height, started, started, wall)
        with self.lock:
            write_atomic(self.current_path, data)
            self._history.append(frame)
            self._forget_old(started)
        self.stats.writes += 1
        if self._publish:
            # Frames read raw bypass backend.capture(), so announce each distinct one.
            shot = Screenshot(
                data=data,
                format="png",
                width=frame.width,
                height=frame.height,
                captured_at=frame.captured_at,
                source=self.backend.name,
            )
            publish_screenshot(shot, self._context)

    def _forget_old(self, now: float) -> None:
        # An action is paired some time after it happened (the listener, the GIL, a busy
        # machine), and a screen that repaints often is captured often: frames are kept
        # for as long as an action may still ask for them, not by count alone.
        history = self._history
        while len(history) > self._keep and history[1].first_seen < now - _KEEP_SECONDS:
            history.popleft()

    def _touch_current(self) -> None:
        try:
            os.utime(self.current_path)
        except FileNotFoundError:
            # Someone removed it; put the frame back rather than leave readers nothing.
            with self.lock:
                write_atomic(self.current_path, self._history[-1].data)
        except OSError as exc:  # only the freshness stamp is lost; the frame is intact
            log.debug("cannot touch %s: %s", self.current_path, exc)
