"""The latest accessibility tree, read on change, and the rule that pairs it with a press.

The frame store keeps the screen as it was before each action (:mod:`.frames`); this
keeps the tree the same way. A background thread reads the tree when the display reports
a repaint (:mod:`.damage`) and at least every :data:`REFRESH_S` seconds, and remembers
each read with the instants it started and finished. A press is paired with the newest
read that finished before the press's own instant, and only when no repaint happened
from the moment that read began until the press: a read from after the press could
already show what the press did (a button that relabels itself), and one the screen
changed under may hold a mix of before and after. When no read qualifies the element is
left out, never taken from a later read.

Cost is bounded: reads follow each other no closer than :data:`MIN_GAP_S`, or four
times the last read's duration, so a screen that repaints without pause costs a few
reads a second; a read that fails or takes longer than its source's timeout pauses
reading for :data:`RETRY_AFTER_S` seconds (a hung application costs one timeout per
pause, not one per repaint), and is logged once.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from viewfinder.core import ElementTree

log = logging.getLogger(__name__)

#: With a still screen, the tree is read again this often (seconds): a change that
#: shows no repaint (an application that put its tree on the bus late) is seen too.
REFRESH_S = 2.0
#: Reads are at least this far apart (seconds), and four times the last read's duration.
MIN_GAP_S = 0.1
#: After a failed read, no read is tried for this long (seconds).
RETRY_AFTER_S = 10.0
#: How far apart this process's clock and an instant taken from the X server's may be
#: (seconds), on top of the damage watch's own measured uncertainty.
CLOCK_MARGIN_S = 0.010
#: A repaint stamped less than this before a press (seconds) is taken for the press's
#: own reaction (see :meth:`TreeReads.before`).
PRESS_MARGIN_S = 0.020
#: At most this many reads at start, while the screen changes under them.
START_READS = 3
#: Reads and repaints older than this (seconds) are forgotten; a press is paired well
#: within it.
KEEP_S = 5.0


@dataclass(frozen=True)
class TreeRead:
    """One read of the tree and when it was made (monotonic instants)."""

    tree: ElementTree
    started: float
    finished: float


@dataclass
class ReadStats:
    """What the background reads cost, for metadata.json's run entry."""

    reads: int = 0
    failed: int = 0
    read_s: float = 0.0


class TreeReads:
    """Reads a tree with ``read()`` on change, in the background (see the module doc).

    ``watch`` is a started :class:`~viewfinder.recorder.damage.DamageWatch` (or anything
    with ``sync()`` and ``clock``) whose repaints are handed to :meth:`changed`; it tells
    the reads which repaints happened before a press.
    """

    def __init__(self, read: Callable[[], ElementTree], watch: Any, name: str = "") -> None:
        self._read = read
        self._watch = watch
        self._name = name
        self.stats = ReadStats()
        self._wake = threading.Condition()
        self._reads: deque[TreeRead] = deque()
        self._damage: deque[float] = deque()
        self._due = False
        self._stopping = False
        self._paused_until = 0.0
        self._next_read = 0.0
        self._logged = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Read the tree now (so the first press has one), then keep reading.

        A repaint under the first read (starting a recording repaints nothing, but the
        applications may) makes it read again, a few times at most.
        """
        for _ in range(START_READS):
            self._read_once()
            latest = self.latest
            self._watch.sync()
            if latest is not None and not self._changed_since(latest.started, math.inf):
                break
        # A press is paired with a read that finished a clock margin before it: the
        # first press (a program's click right after start) must find this one.
        time.sleep(self._margin())
        self._thread = threading.Thread(
            target=self._run, name=f"viewfinder-recorder-elements {self._name}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop reading (idempotent); a read in progress ends within its timeout."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def changed(self, at: float) -> None:
        """The screen repainted at monotonic instant ``at`` (from the damage watch)."""
        with self._wake:
            self._damage.append(at)
            self._forget(at)
            self._due = True
            self._wake.notify_all()

    def before(self, at: float) -> TreeRead | None:
        """The read that shows the tree as it was at monotonic instant ``at`` (a press),
        or None when no read can be from before it."""
        self._watch.sync()  # every repaint the server did so far is known
        margin = self._margin()
        with self._wake:
            newest = next((r for r in reversed(self._reads) if r.finished + margin <= at), None)
            if newest is None:
                return None
            # The read's start is this process's clock: a repaint just before it counts
            # as after it. A repaint stamped a few ms before the press counts as the
            # press's own: an application's reaction to a press has been seen stamped
            # 2-6 ms before the press on a loaded machine; and no one aims at a change
            # that recent (a person takes a tenth of a second to react to one).
            if self._changed_since(newest.started, at - PRESS_MARGIN_S, margin):
                log.debug(
                    "no read from before the press at %.3f: the newest began at %.3f, "
                    "repaints at %s",
                    at,
                    newest.started,
                    [round(moment, 3) for moment in self._damage if moment >= newest.started - 1],
                )
                return None
            return newest

    def _changed_since(self, started: float, until: float, margin: float | None = None) -> bool:
        """Whether a repaint happened from just before ``started`` up to ``until``."""
        margin = self._margin() if margin is None else margin
        with self._wake:
            return any(started - margin <= moment < until for moment in self._damage)

    def current(self, quiet: float = 0.0) -> bool:
        """Whether a press now would find a read from before it: the newest read began
        after the last repaint, and nothing was repainted for ``quiet`` seconds (a test
        waits for this as a person looks at the screen before acting)."""
        self._watch.sync()
        since = time.monotonic() - quiet
        with self._wake:
            if not self._reads or self._changed_since(self._reads[-1].started, math.inf):
                return False
            return not any(moment >= since for moment in self._damage)

    @property
    def latest(self) -> TreeRead | None:
        """The newest read that worked, if any."""
        with self._wake:
            return self._reads[-1] if self._reads else None

    def _margin(self) -> float:
        clock = getattr(self._watch, "clock", None)
        return CLOCK_MARGIN_S + getattr(clock, "uncertainty_ms", 0.0) / 1000

    # -- the reader ------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopping:
                    now = time.monotonic()
                    due_at = max(self._next_read, self._paused_until)
                    latest = self._reads[-1].started if self._reads else 0.0
                    if not self._due:
                        due_at = max(due_at, latest + REFRESH_S)
                    if now >= due_at:
                        break
                    self._wake.wait(due_at - now)
                if self._stopping:
                    return
                self._due = False
            self._read_once()

    def _read_once(self) -> None:
        started = time.monotonic()
        try:
            tree = self._read()
        except Exception as exc:  # a hung or crashed application must not stop a recording
            finished = time.monotonic()
            self.stats.failed += 1
            with self._wake:
                self._paused_until = finished + RETRY_AFTER_S
            if not self._logged:
                self._logged = True
                log.warning(
                    "could not read the accessibility tree of %s (%s); actions go without "
                    "their element until a read works (retried every %g s)",
                    self._name,
                    exc,
                    RETRY_AFTER_S,
                )
        else:
            finished = time.monotonic()
            with self._wake:
                self._reads.append(TreeRead(tree, started, finished))
                self._forget(finished)
        finally:
            self.stats.reads += 1
            self.stats.read_s += time.monotonic() - started
        with self._wake:
            self._next_read = finished + max(MIN_GAP_S, 4 * (finished - started))
            if self._changed_since(started, math.inf):
                self._due = True  # the screen changed around this read: read it again

    def _forget(self, now: float) -> None:
        # The newest read always stays (a still screen keeps it valid for any press);
        # repaints are kept back to the oldest read's start, which is all a press checks.
        reads, damage = self._reads, self._damage
        while len(reads) > 1 and reads[1].finished < now - KEEP_S:
            reads.popleft()
        oldest = reads[0].started - 1.0 if reads else now - KEEP_S
        while damage and damage[0] < min(oldest, now - KEEP_S):
            damage.popleft()
