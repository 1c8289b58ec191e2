"""The element under each pointer action, read from the display's accessibility tree.

When a recording is made on an X display whose accessibility bus is running (a
:class:`~viewfinder.xvfb.Display` started with ``accessibility=True``), every click,
double click, right or middle click, scroll and the press point of every drag is
stored with the element the pointer was on: its role, name, the path of roles and
names above it, and its box (``element`` in the manifest line, an
:class:`~viewfinder.core.ElementAnchor`). A cache built from the recording finds the
element again by that path when the pixels moved.

When the tree is read: before the press, as the frame is. :mod:`.tree_reads` reads it
in the background whenever the display reports a repaint (and every few seconds on a
still screen), and a press is paired with the newest read that finished before the
press happened, provided the screen did not change from the start of that read to the
press. Reading at the press instead read the tree when the press *arrived*, after the
application may already have handled it: a button that relabels itself when clicked
('Start' to 'Stop') was recorded under its new name. When no read qualifies (the screen
changed just before the press, faster than a read takes) the element is left out and
counted (``not_before``), never taken from a read that could be from after the press.
Naming the element then costs the press only a round trip to the X server and a walk of
the kept tree; the reads run on their own thread.

The tree does not know which window is in front: an element is kept only when its
window is the one the X server shows at the point (:mod:`viewfinder.xvfb.top_window`),
asked at the press, so a click on a Tk window lying over a GTK button is not taken for
a click on the button.

A read that fails or times out is logged once, and reading pauses for
:data:`~viewfinder.recorder.tree_reads.RETRY_AFTER_S` seconds, so an application that
stopped answering costs one timeout per pause, not one per repaint. Nothing here stops
a recording.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any

from viewfinder.core import ElementAnchor, ElementSource, ElementTree, get_element_source
from viewfinder.recorder.tree_reads import TreeReads

log = logging.getLogger(__name__)

#: Where AT-SPI clients find a display's accessibility bus: a property of the root window.
BUS_PROPERTY = "AT_SPI_BUS"
#: One read of the tree may take this long (seconds) before it counts as failed.
READ_TIMEOUT_S = 1.0
#: An element whose role or name, or one above it, is longer than this is left out: an
#: app names its widgets, and a name that long is no name to find a button by again
#: (clipped, it would no longer match); it would only swell every line it is on.
MAX_NAME_CHARS = 500


@dataclass
class LookupStats:
    """What the lookups found and cost, for metadata.json's run entry."""

    #: pointer actions whose element was looked up
    lookups: int = 0
    found: int = 0
    #: left out: no read of the tree was from before the press (the screen changed
    #: after the newest read began and before the press, or no read had finished)
    not_before: int = 0
    #: an element was in the tree there, but another window (one that exposes no
    #: tree, Tk) was in front of it
    covered: int = 0
    #: an element was there, but a name on its path was longer than MAX_NAME_CHARS
    too_long: int = 0
    #: time the actions spent looking up (the kept tree, the front window)
    lookup_s: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        mean_ms = 1000 * self.lookup_s / self.lookups if self.lookups else 0.0
        return {
            "lookups": self.lookups,
            "found": self.found,
            "not_before": self.not_before,
            "covered": self.covered,
            "too_long": self.too_long,
            "mean_lookup_ms": round(mean_ms, 1),
        }


class PointerElements:
    """Looks up the element at a screen point in ``source``'s tree (one source per
    session, so the refs stored stay those of one session)."""

    def __init__(self, source: ElementSource, display: str, conn: Any) -> None:
        self.source = source
        self.display = display
        self._conn = conn  # an Xlib connection to ``display``: which window is in front
        self.stats = LookupStats()
        self.reads: TreeReads | None = None

    @classmethod
    def for_display(cls, display: str) -> tuple[PointerElements | None, str]:
        """Lookups on X display ``display`` when it has an accessibility bus; else None
        and the reason there are none."""
        from Xlib.display import Display as XDisplay

        try:
            conn = XDisplay(display)
        except Exception as exc:  # the display's own errors are the capture backend's
            return None, f"cannot open display {display}: {exc}"
        source: ElementSource | None = None
        reason = f"display {display} has no accessibility bus"
        try:
            if has_accessibility_bus(conn):
                source = get_element_source("atspi", display=display, timeout=READ_TIMEOUT_S)
        except Exception as exc:  # no atspi source installed, or it refuses this display
            reason = str(exc)
            log.warning("actions on %s are recorded without elements: %s", display, exc)
        if source is None:
            with contextlib.suppress(Exception):
                conn.close()
            return None, reason
        return cls(source, display, conn), ""

    def follow(self, watch: Any) -> None:
        """Keep the latest tree, read on the repaints ``watch`` reports (a started
        :class:`~viewfinder.recorder.damage.DamageWatch`; hand its repaints to
        :meth:`changed`). Reads the tree once before returning."""
        self.reads = TreeReads(self.source.read, watch, self.display)
        self.reads.start()

    def changed(self, at: float) -> None:
        """The screen repainted at monotonic instant ``at``."""
        if self.reads is not None:
            self.reads.changed(at)

    def before(self, x: int, y: int, at: float) -> ElementAnchor | None:
        """The element a pointer at (``x``, ``y``) acted on at monotonic instant ``at``,
        from a tree read before then (:meth:`follow`); None when there is none there
        or no read is from before ``at``."""
        if self.reads is None:
            raise RuntimeError("follow() a damage watch before asking for elements")
        started = time.monotonic()
        try:
            self.stats.lookups += 1
            read = self.reads.before(at)
            if read is None:
                self.stats.not_before += 1
                return None
            return self._anchor(read.tree, x, y)
        finally:
            self.stats.lookup_s += time.monotonic() - started

    def at(self, x: int, y: int) -> ElementAnchor | None:
        """The element at (``x``, ``y``) in a tree read now (not for a press that has
        happened: the application may have changed since; see :meth:`before`). Raises
        what the read raises. Not while :meth:`follow` reads in the background."""
        started = time.monotonic()
        try:
            self.stats.lookups += 1
            return self._anchor(self.source.read(), x, y)
        finally:
            self.stats.lookup_s += time.monotonic() - started

    def _anchor(self, tree: ElementTree, x: int, y: int) -> ElementAnchor | None:
        if not tree.roots:
            return None
        from viewfinder.xvfb.top_window import element_in_front

        # only the window the X server shows in front at the point is searched: a
        # window of another app (Tk, say) over a GTK button names nothing
        element, covered = element_in_front(self._conn, tree, x, y)
        if covered is not None:
            self.stats.covered += 1
            return None
        if element is None:
            return None
        anchor = tree.anchor(element)
        words = [anchor.role, anchor.name, *(word for pair in anchor.path for word in pair)]
        if max(map(len, words)) > MAX_NAME_CHARS:
            self.stats.too_long += 1
            return None
        self.stats.found += 1
        return anchor

    def summary(self) -> dict[str, float | int | str]:
        """The run's ``elements`` entry for metadata.json."""
        found: dict[str, float | int | str] = {"source": self.source.name}
        if self.reads is not None:
            stats = self.reads.stats
            mean_ms = 1000 * stats.read_s / stats.reads if stats.reads else 0.0
            found.update(reads=stats.reads, failed=stats.failed, mean_read_ms=round(mean_ms, 1))
        return {**found, **self.stats.as_dict()}

    def close(self) -> None:
        if self.reads is not None:
            self.reads.stop()
        with contextlib.suppress(Exception):
            self.source.close()
        with contextlib.suppress(Exception):
            self._conn.close()


def has_accessibility_bus(conn: Any) -> bool:
    """True when the X display of Xlib connection ``conn`` names an accessibility bus on
    its root window."""
    from Xlib import X

    atom = conn.intern_atom(BUS_PROPERTY, only_if_exists=True)
    if not atom:
        return False
    prop = conn.screen().root.get_full_property(atom, X.AnyPropertyType)
    return prop is not None and bool(prop.value)
