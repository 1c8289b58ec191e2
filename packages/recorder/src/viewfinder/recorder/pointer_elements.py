"""The element under each pointer action, read from the display's accessibility tree.

When a recording is made on an X display whose accessibility bus is running (a
:class:`~viewfinder.xvfb.Display` started with ``accessibility=True``), every click,
double click, right or middle click, scroll and the press point of every drag is
stored with the element the pointer was on: its role, name, the path of roles and
names above it, and its box (``element`` in the manifest line, an
:class:`~viewfinder.core.ElementAnchor`). A cache built from the recording finds the
element again by that path when the pixels moved.

When the tree is read: right when the press is reported, on the thread reporting it
(the X listener's), before the action's line is written. Naming the element under a
click on the GTK test form costs about 15 ms on a loaded two-core machine
(benchmarks/recorder_elements.py); the frame store captures on its own thread and picks
the frame from before the press by the press's own time, so the read delays neither
the capture nor the choice of frame, only the handling of the next input event. A tree
kept up to date in the background instead would cost a read after every repaint and
could still be older than the last change; a read at the press sees the screen as the
person saw it, unless the application changed under the pointer within those
milliseconds (a popup that opens on the press itself).

The tree does not know which window is in front: an element is kept only when its
window is the one the X server shows at the point (:mod:`viewfinder.xvfb.top_window`),
so a click on a Tk window lying over a GTK button is not taken for a click on the button.

A read that fails or times out leaves the element out and is logged once; after a
failure no read is tried for :data:`RETRY_AFTER_S` seconds, so an application that
stopped answering costs one timeout, not one per click. Nothing here stops a recording.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any

from viewfinder.core import Element, ElementAnchor, ElementSource, ElementTree, get_element_source

log = logging.getLogger(__name__)

#: Where AT-SPI clients find a display's accessibility bus: a property of the root window.
BUS_PROPERTY = "AT_SPI_BUS"
#: One read of the tree may take this long (seconds) before the element is left out.
READ_TIMEOUT_S = 1.0
#: After a failed read, actions go without an element for this long (seconds).
RETRY_AFTER_S = 10.0
#: An element whose role or name, or one above it, is longer than this is left out: an
#: app names its widgets, and a name that long is no name to find a button by again
#: (clipped, it would no longer match); it would only swell every line it is on.
MAX_NAME_CHARS = 500


@dataclass
class LookupStats:
    """What the lookups cost, for metadata.json's run entry."""

    reads: int = 0
    found: int = 0
    #: an element was in the tree there, but another window (one that exposes no
    #: tree, Tk) was in front of it
    covered: int = 0
    #: an element was there, but a name on its path was longer than MAX_NAME_CHARS
    too_long: int = 0
    failed: int = 0
    #: time spent looking up (reading the tree, finding the element, the front window)
    lookup_s: float = 0.0

    def as_dict(self) -> dict[str, float | int]:
        mean_ms = 1000 * self.lookup_s / self.reads if self.reads else 0.0
        return {
            "reads": self.reads,
            "found": self.found,
            "covered": self.covered,
            "too_long": self.too_long,
            "failed": self.failed,
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
        self._logged = False
        self._paused_until = 0.0

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

    def at(self, x: int, y: int) -> ElementAnchor | None:
        """The element a pointer at (``x``, ``y``) acts on now, or None (none there, or
        the tree could not be read)."""
        if time.monotonic() < self._paused_until:
            return None
        started = time.monotonic()
        try:
            tree = self.source.read()
            element = tree.element_at(x, y)
            if element is not None and not self._in_front(tree, element, x, y):
                self.stats.covered += 1
                return None
        except Exception as exc:  # a hung or crashed application must not stop a recording
            self.stats.failed += 1
            self._paused_until = time.monotonic() + RETRY_AFTER_S
            if not self._logged:
                self._logged = True
                log.warning(
                    "could not read the accessibility tree of %s (%s); actions go without "
                    "their element until a read works (retried every %g s)",
                    self.display,
                    exc,
                    RETRY_AFTER_S,
                )
            return None
        finally:
            self.stats.reads += 1
            self.stats.lookup_s += time.monotonic() - started
        if element is None:
            return None
        anchor = tree.anchor(element)
        words = [anchor.role, anchor.name, *(word for pair in anchor.path for word in pair)]
        if max(map(len, words)) > MAX_NAME_CHARS:
            self.stats.too_long += 1
            return None
        self.stats.found += 1
        return anchor

    def _in_front(self, tree: ElementTree, element: Element, x: int, y: int) -> bool:
        """Whether ``element``'s window is the one in front at the point."""
        from viewfinder.xvfb.top_window import shows, window_at

        front = window_at(self._conn, x, y)
        return front is not None and shows(front, tree, element)

    def close(self) -> None:
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
