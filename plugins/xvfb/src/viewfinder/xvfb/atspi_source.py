"""The ``atspi`` element source: the accessibility trees of the apps on an X display.

The display's accessibility bus is found where AT-SPI clients look for it, the
``AT_SPI_BUS`` property of the root window (a :class:`~viewfinder.xvfb.Display` started
with ``accessibility=True`` sets it). Apps that expose no tree (Tk draws its widgets
itself and implements no AT-SPI) are named in the read's ``reason``: the tree is empty
or partial, never an error.

Any client of a display can set that property, so on a display viewfinder started (an
Xvfb with a ``-fbdir``) it is not read at all: the source connects to the bus viewfinder
started for that display, by its socket in that framebuffer folder (owned by this
user), and says in the read's reason when the property was changed. Code in one session
that points its display's property at another session's bus (by any spelling of the
address: a %-escaped ``..`` once passed a check of the raw string) reads its own
display's tree, or, on a display without buses, nothing. Only a display started
elsewhere is read by its property.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import Xlib.display
import Xlib.error
from Xlib import X

from viewfinder.core.backend import Availability
from viewfinder.core.element_sources import (
    ElementNode,
    ElementRead,
    ElementSource,
    ElementSourceError,
)
from viewfinder.core.errors import DisplayGoneError
from viewfinder.xvfb import server, sockets
from viewfinder.xvfb.accessibility_bus import BUS_SOCKET, ROOT_PROPERTY
from viewfinder.xvfb.connection import close_quietly, open_display, x_errors
from viewfinder.xvfb.windows import top_level_windows

if TYPE_CHECKING:
    from viewfinder.xvfb.atspi import AtspiReader, ReadLimits

NO_BUS_REASON = (
    "display {display} has no accessibility bus (no AT_SPI_BUS on its root window): start "
    "it with Display(accessibility=True) or display.start_accessibility(), then start the "
    "apps with display.env()"
)
FOREIGN_BUS_REASON = (
    "display {display}'s AT_SPI_BUS names {address!r}, which is not one of the display's own "
    "buses (it has none: they would be sockets in {folder}); a client of the display set it, "
    "so nothing is read. Start the display's buses with display.start_accessibility()"
)
CHANGED_BUS_NOTE = (
    "the root window's AT_SPI_BUS was changed to {address!r} by a client of the display; it "
    "is ignored: the display's own bus was read"
)
NO_TREE_REASON = (
    "{windows} expose no accessibility tree (Tk implements no AT-SPI; other toolkits may "
    "have been started without the bus's environment: see docs/elements.md)"
)
LEFT_OUT_REASON = (
    "{count} elements left out (max_elements={limit}; visible and interactive ones are "
    "kept first): pass a larger max_elements to read them"
)
#: How many elements a read asks about at least, before it keeps ``max_elements``.
MAX_READ = 5000


class AtspiSource(ElementSource):
    """The AT-SPI2 trees of the apps on X display ``display`` (default ``$DISPLAY``).

    ``timeout`` bounds one read (seconds); ``max_elements`` caps how many elements it
    keeps (a browser's tree can hold tens of thousands): the visible and interactive
    ones first, and the read's reason says how many it left out. The connection to the
    bus and the X connection are kept from one read to the next (until the bus changes
    or a read fails); :meth:`close` ends them.
    """

    name = "atspi"
    priority = 10
    clips_boxes = True

    def __init__(
        self, display: str | None = None, timeout: float = 5.0, max_elements: int = 5000
    ) -> None:
        super().__init__()
        chosen = display or os.environ.get("DISPLAY")
        if not chosen:
            raise ElementSourceError("no X display: pass display=':N' or set DISPLAY")
        if not timeout > 0:
            raise ElementSourceError(f"timeout must be more than 0 seconds, got {timeout}")
        if max_elements < 1:
            raise ElementSourceError(f"max_elements must be 1 or more, got {max_elements}")
        self.display = chosen
        self.timeout = timeout
        self.max_elements = max_elements
        self._reader: AtspiReader | None = None
        self._lock = threading.Lock()
        self._x: Xlib.display.Display | None = None
        self._server_pid: int | None = None  # the display's Xvfb, as found last time

    @classmethod
    def availability(cls, display: str | None = None, **_: Any) -> Availability:
        if not (display or os.environ.get("DISPLAY")):
            return Availability.no("no X display: pass display=':N' or set DISPLAY")
        return Availability.yes()

    def _read(self) -> ElementRead:
        with self._lock:  # one read at a time on the kept connections
            return self._read_now()

    def _read_now(self) -> ElementRead:
        from viewfinder.xvfb.atspi import ReadLimits
        from viewfinder.xvfb.atspi_cut import keep_first

        published, size, windows = self._look()
        folder, self._server_pid = _own_bus_folder(self.display, self._server_pid)
        notes = []
        if folder is not None:
            # a display viewfinder started: its own bus, by the address its socket has,
            # never the root window's word, which any client of the display can change
            address = own_bus_address(folder)
            if address is None:
                reason = NO_BUS_REASON if published is None else FOREIGN_BUS_REASON
                return ElementRead(
                    [], reason.format(display=self.display, address=published, folder=folder)
                )
            if published is not None and published.split(",")[0] != address:
                notes.append(CHANGED_BUS_NOTE.format(address=published[:200]))
        elif published is None:
            return ElementRead([], NO_BUS_REASON.format(display=self.display))
        else:
            address = published
        limits = ReadLimits(
            max_elements=self.max_elements,
            timeout=self.timeout,
            max_read=max(self.max_elements, MAX_READ),
        )
        reader = self._reader_for(address, size, limits)
        try:
            roots = reader.read(reader.applications())
        except BaseException:
            self._drop_reader()  # a read cut short leaves answers on its way
            raise
        cut = keep_first(roots, self.max_elements)
        reasons = [
            _unexposed(windows, roots),
            _left_out(cut, reader.unread, self.max_elements),
            *notes,
        ]
        return ElementRead(roots, "; ".join(reason for reason in reasons if reason))

    def _look(self) -> tuple[str | None, tuple[int, int], list[tuple[str, str, int | None]]]:
        """The bus address, screen size and mapped windows, over the kept X connection
        (opening one takes python-xlib longer than the rest of a small read)."""
        for attempt in range(2):
            if self._x is None:
                self._x = open_display(self.display)
            try:
                with x_errors(self.display):
                    screen = self._x.screen()
                    size = (screen.width_in_pixels, screen.height_in_pixels)
                    return _bus_address(self._x), size, _mapped_windows(self._x)
            except DisplayGoneError:
                close_quietly(self._x)
                self._x = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _reader_for(self, address: str, size: tuple[int, int], limits: ReadLimits) -> AtspiReader:
        from viewfinder.xvfb.atspi import AtspiReader

        if self._reader is not None and self._reader.address != address:
            self._drop_reader()
        if self._reader is None:
            self._reader = AtspiReader(address, size, limits)
        self._reader.screen, self._reader.limits = size, limits
        return self._reader

    def _drop_reader(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def close(self) -> None:
        with self._lock:
            self._drop_reader()
            if self._x is not None:
                close_quietly(self._x)
                self._x = None


def _bus_address(conn: Xlib.display.Display) -> str | None:
    atom = conn.intern_atom(ROOT_PROPERTY, only_if_exists=True)
    if not atom:
        return None
    prop = conn.screen().root.get_full_property(atom, X.AnyPropertyType)
    if prop is None or not prop.value:
        return None
    value = prop.value
    return (value.decode() if isinstance(value, bytes) else str(value)).strip("\0") or None


def _own_bus_folder(display: str, known: int | None = None) -> tuple[Path | None, int | None]:
    """The framebuffer folder of the Xvfb serving local ``display`` when viewfinder started
    it (its buses' sockets live there), else None (a display started elsewhere); and
    that Xvfb's pid. ``known``: the pid found last time, checked first (finding it
    anew looks through every process)."""
    match = re.fullmatch(r"(?:unix)?:(\d+)(?:\.\d+)?", display)
    if match is None:
        return None, None
    pid = server_pid(int(match.group(1)), known)
    if pid is None:
        return None, None
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None, None
    folder = server.argument_after(argv, b"-fbdir")
    return (Path(os.path.normpath(folder)) if folder else None), pid


def server_pid(number: int, known: int | None = None) -> int | None:
    """The pid of the Xvfb listening on display ``number``'s socket, or None.

    Found by the socket, not a lock file: Xvfb started with ``-displayfd`` writes none,
    and a stale one names a dead or reused pid. ``known`` is tried first.
    """
    inodes = sockets.listening_inodes(number)
    if not inodes:
        return None
    candidates = [entry.name for entry in Path("/proc").iterdir() if entry.name.isdigit()]
    if known is not None:
        candidates.insert(0, str(known))
    for name in candidates:
        if not server.is_xvfb(int(name)):
            continue
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{name}/fd").iterdir()]
        except OSError:
            continue
        if inodes.intersection(links):
            return int(name)
    return None


def own_bus_address(folder: Path) -> str | None:
    """The address of the accessibility bus viewfinder started for the display whose
    framebuffer folder is ``folder`` (its socket is there), or None when it has none."""
    socket = folder / BUS_SOCKET
    try:
        found = socket.lstat()
    except OSError:
        return None
    if not stat.S_ISSOCK(found.st_mode) or found.st_uid != os.getuid():
        return None
    return f"unix:path={socket}"


def _mapped_windows(conn: Xlib.display.Display) -> list[tuple[str, str, int | None]]:
    """The mapped top-level windows: title (or "" for none), WM_CLASS class, owner pid."""
    from viewfinder.xvfb.top_window import owner_pid

    found = []
    for window_id in top_level_windows(conn):
        window = conn.create_resource_object("window", window_id)
        try:
            if window.get_attributes().map_state != X.IsViewable:
                continue
            title = window.get_wm_name()
            wm_class = window.get_wm_class()
        except Xlib.error.XError:  # gone meanwhile
            continue
        found.append(
            (str(title or ""), wm_class[1] if wm_class else "?", owner_pid(conn, window_id))
        )
    return found


def _unexposed(windows: list[tuple[str, str, int | None]], roots: list[ElementNode]) -> str:
    """A reason naming the windows of processes no application's tree comes from (by
    the X server's owner of each window against each application's pid on the bus;
    by title where the X server does not say who owns a window)."""
    from viewfinder.xvfb.toolkit_hints import hint

    pids = {app.pid for app in roots if app.pid is not None}
    titles = {child.name for app in roots for child in app.children}
    missing, hints = [], []
    for title, wm_class, pid in windows:
        if pid in pids or (pid is None and title in titles):
            continue
        if pid is None and not title:
            continue  # nothing to tell it by: not claimed either way
        named = repr(title) if title else "an untitled window"
        missing.append(f"{named} ({wm_class})")
        why = hint(pid)
        if why and why.startswith("its "):  # Tk's is said for every window
            hints.append(f"{named}: {why}")
    if not missing:
        return ""
    reason = NO_TREE_REASON.format(windows="window " + ", ".join(dict.fromkeys(missing)))
    return "; ".join([reason, *dict.fromkeys(hints)])


def _left_out(cut: int, unread: int, limit: int) -> str:
    """A reason saying how many elements a read left out, or ""."""
    if not cut and not unread:
        return ""
    count = f"at least {cut + unread}" if unread else str(cut)
    return LEFT_OUT_REASON.format(count=count, limit=limit)
