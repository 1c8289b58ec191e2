"""Where a pointer action lands, asked of the X server: the one check before any act on
a target.

An accessibility tree holds only the applications that expose one, and says nothing of
which window is in front: a Tk window over a GTK one leaves the GTK button under it in
the tree. :func:`window_at` asks the server which top-level window is on top at a point
(its stacking order) and which process owns it (the X-Resource extension: the server
knows each client's process from its socket, so a window cannot claim another app's).

:func:`refusal` is the check itself, used by every act on a target (a ComputerTool
action on an element, a healed replay step, a plain replayed step that recorded its
element) and by the recorder before it names an element:

1. the window in front at the point belongs to the target's application (the process
   the accessibility bus names for it, against the process the X server names for the
   window: never a title, which any app may copy);
2. it is the target's own window of that application (its box is the window's inside;
   two windows of one app at one place cannot be told apart, so that is a refusal);
3. the element under the point in that window is the target (an element action), or
   has the recorded role, name and path (a replayed step's anchor).

Anything else is a reason, in one line, and the caller does nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from Xlib import X
from Xlib.error import XError

from viewfinder.core import Region
from viewfinder.core.element import Element, ElementAnchor, ElementTree

#: How deep below a top-level window its client (the window with the title) may be:
#: a window manager puts each client in a frame of its own, and some frame it twice.
_CLIENT_DEPTH = 2


@dataclass(frozen=True)
class TopWindow:
    """The front window at a point: its title (for messages only), where its inside is
    on the screen (clipped to it), its X id and the process that owns it (None when the
    X server cannot say: a client connected over TCP)."""

    title: str
    box: Region
    window: int = 0
    pid: int | None = None

    def describe(self) -> str:
        """``window 'Confirm' (0x400007, process 4711)`` (how reasons name it)."""
        title = f"window {self.title!r}" if self.title else "an untitled window"
        owner = f", process {self.pid}" if self.pid is not None else ""
        return f"{title} ({self.window:#x}{owner})"


def window_at(conn: Any, x: int, y: int) -> TopWindow | None:
    """The top-level window that shows at root point (``x``, ``y``), or None (bare root)."""
    root = conn.screen().root
    for window in reversed(root.query_tree().children):  # the top of the stack first
        try:
            attributes = window.get_attributes()
            if attributes.map_state != X.IsViewable or attributes.win_class == X.InputOnly:
                continue
            frame = window.get_geometry()
        except XError:  # gone meanwhile
            continue
        if not (frame.x <= x < frame.x + frame.width and frame.y <= y < frame.y + frame.height):
            continue
        client, title = _client(conn, window, _CLIENT_DEPTH) or (window, "")
        try:
            inside = client.get_geometry()
            origin = root.translate_coords(client, 0, 0)
        except XError:
            continue
        box = _on_screen(conn, origin.x, origin.y, inside.width, inside.height)
        if box is None:
            continue
        return TopWindow(title, box, client.id, owner_pid(conn, client.id))
    return None


#: The longest application name kept (an app chooses its own WM_CLASS and argv).
MAX_APP_CHARS = 200

#: The " #2" Tk adds to an app's name when another app of that name is on the display.
_TK_COPY = re.compile(r" #\d+$")

#: Programs that run another: the application is the script or module they run.
_INTERPRETERS = re.compile(r"(python|pypy|perl|ruby|node|java|sh|bash|dash|wish|tclsh)[\d.]*$")


def application_at(conn: Any, x: int, y: int) -> str | None:
    """The application whose window is in front at (``x``, ``y``): the program of the
    process that owns the window (as the X server knows it; an interpreter's script or
    module, ``pay_form.py``) and the window's ``WM_CLASS``, as
    ``"pay_form.py (tk/Tk)"``; None over the bare root, or when neither is known.

    The same program started again names itself the same: a replay compares this with
    what a recording kept, so a step does not act on another program's window that now
    lies where its own was (the check a step without an element relies on: every
    tkinter app's WM_CLASS is ``tk/Tk``, hence the program). An app may rename itself,
    as it may copy a title; the name tells apps apart that differ by accident, not by
    design. Only base names are kept (never arguments), bounded and shown plainly."""
    from viewfinder.core.plain_text import neutralised

    front = window_at(conn, x, y)
    if front is None:
        return None
    try:
        names = conn.create_resource_object("window", front.window).get_wm_class()
    except XError:
        names = None
    program = _program(front.pid) if front.pid is not None else None
    if not names and program is None:
        return None
    # Tk names the second app of a name on a display "tk #2": which one started first
    # is no part of what the app is
    parts = [_TK_COPY.sub("", str(part)) for part in names[:2]] if names else []
    klass = "/".join(parts) if parts else "-"
    return neutralised(f"{program or '?'} ({klass})", MAX_APP_CHARS)


def _program(pid: int) -> str | None:
    """The base name of process ``pid``'s program (an interpreter's script or module)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    words = [word.decode("utf-8", "replace") for word in argv if word]
    if not words:
        return None
    name = PurePath(words[0]).name
    if not _INTERPRETERS.match(name):
        return name
    rest = iter(words[1:])
    for word in rest:
        if word in ("-m", "-c"):
            return next(rest, name) if word == "-m" else name
        if not word.startswith("-"):
            return PurePath(word).name
    return name


def owner_pid(conn: Any, window_id: int) -> int | None:
    """The process of the X client that made window ``window_id``, as the X server knows
    it (X-Resource), or None."""
    from Xlib.ext import res

    if not conn.has_extension(res.extname):
        return None
    try:
        reply = conn.res_query_client_ids([{"client": window_id, "mask": res.LocalClientPIDMask}])
    except XError:
        return None
    for found in reply.ids:
        if found.spec.mask & res.LocalClientPIDMask and found.value:
            return int(found.value[0])
    return None


def front_refusal(front: TopWindow | None, tree: ElementTree, element: Element) -> str | None:
    """Why a click at a point where ``front`` is in front would not reach ``element``'s
    window (of ``tree``); None when it would."""
    if front is None:
        return "no window is at that point"
    application = tree.application(element)
    if application.pid is None:
        return f"which process draws {_named(application)} is not known"
    if front.pid is None:
        return f"the X server does not say which process owns {front.describe()}"
    if front.pid != application.pid:
        return f"{front.describe()} of another application is in front there"
    window = tree.window_of(element)
    if window is None:
        return f"{_named(element)} is in no window"
    if window.box != front.box:
        return f"{front.describe()}, another window of {_named(application)}, is in front there"
    twins = [
        other
        for other in application.children
        if other.ref != window.ref and other.visible and other.box == window.box
    ]
    if twins:
        return (
            f"{_named(application)} has {len(twins) + 1} windows at that place "
            f"({front.describe()}); which one is in front cannot be told"
        )
    return None


def shows(front: TopWindow | None, tree: ElementTree, element: Element) -> bool:
    """Whether ``front`` is ``element``'s own window (see :func:`front_refusal`)."""
    return front_refusal(front, tree, element) is None


def refusal(conn: Any, tree: ElementTree, element: Element, x: int, y: int) -> str | None:
    """Why a pointer acting at (``x``, ``y``) would not act on ``element`` of ``tree``
    (read just before); None when it would.

    The window in front there must be ``element``'s own (:func:`front_refusal`), and the
    element under the point in that window must be ``element``, an element holding it
    (a click on a button's label acts on the button), or a part of it that is no target
    of its own (the label inside a button).
    """
    reason = front_refusal(window_at(conn, x, y), tree, element)
    if reason is not None:
        return reason
    under = tree.element_at(x, y, within=tree.window_of(element))
    if under is None:
        return f"no element of its window is at ({x}, {y})"
    if under.ref == element.ref:
        return None
    if element.ref in {above.ref for above in tree.ancestors(under)} and not under.interactive:
        return None
    if under.ref in {above.ref for above in tree.ancestors(element)}:
        return None
    return f"the element at ({x}, {y}) is {_named(under)}, not {_named(element)}"


def anchor_refusal(
    conn: Any, tree: ElementTree, anchor: ElementAnchor, x: int, y: int
) -> str | None:
    """Why a replayed step recorded on ``anchor`` must not act at (``x``, ``y``) now;
    None when it may.

    Applies only where the tree holds the recorded application (by the anchor's path):
    where it does not (the app exposes no tree now), nothing here can tell, and None is
    returned. Where it does, the window in front at the point must be one of that
    application's windows, and the element under the point there must have the
    recorded role, name and path: a relabelled button in the same place is refused.
    """
    if not anchor.path:
        return None
    applications = [root for root in tree.roots if (root.role, root.name) == anchor.path[0]]
    if not applications:
        return None
    under, why = element_in_front(conn, tree, x, y, applications)
    if why is not None:
        return why
    if under is None or not tree.names(under, anchor):
        now = _named(under) if under is not None else "no element"
        return f"the element at ({x}, {y}) is now {now}, not the recorded {anchor.describe()}"
    return None


def element_in_front(
    conn: Any,
    tree: ElementTree,
    x: int,
    y: int,
    applications: list[Element] | None = None,
) -> tuple[Element | None, str | None]:
    """The element a pointer at (``x``, ``y``) acts on, searched only in the window the X
    server shows in front there (:meth:`ElementTree.element_at` with ``within``), as
    ``(element, None)``; ``(None, reason)`` when that window is none of ``applications``'
    (default: the tree's) windows, or two of them lie at that place."""
    front = window_at(conn, x, y)
    if front is None:
        return None, f"no window is at ({x}, {y})"
    apps = tree.roots if applications is None else applications
    owned = [app for app in apps if app.pid is not None and app.pid == front.pid]
    if not owned:
        which = f"{apps[0].name!r}" if applications is not None and apps else "an application read"
        return None, f"{front.describe()} is in front at ({x}, {y}), not a window of {which}"
    windows = [
        window
        for app in owned
        for window in app.children
        if window.visible and window.box == front.box
    ]
    if len(windows) != 1:
        return None, (
            f"{front.describe()} matches {len(windows)} windows of {_named(owned[0])}; "
            "the element under the point cannot be told"
        )
    return tree.element_at(x, y, within=windows[0]), None


def _named(element: Element) -> str:
    return f"{element.role} {element.name!r}" if element.name else element.role


def _on_screen(conn: Any, x: int, y: int, width: int, height: int) -> Region | None:
    # accessibility boxes are clipped to the screen: so is the window's, to compare them
    screen = conn.screen()
    left, top = max(x, 0), max(y, 0)
    right = min(x + width, screen.width_in_pixels)
    bottom = min(y + height, screen.height_in_pixels)
    if right <= left or bottom <= top:
        return None
    return Region(x=left, y=top, width=right - left, height=bottom - top)


def _client(conn: Any, window: Any, depth: int) -> tuple[Any, str] | None:
    """The window with a title at or below ``window`` (a client inside its frames)."""
    title = _title(conn, window)
    if title is not None:
        return window, title
    if depth <= 0:
        return None
    try:
        children = window.query_tree().children
    except XError:
        return None
    for child in reversed(children):
        found = _client(conn, child, depth - 1)
        if found is not None:
            return found
    return None


def _title(conn: Any, window: Any) -> str | None:
    try:
        prop = window.get_full_property(
            conn.intern_atom("_NET_WM_NAME"), conn.intern_atom("UTF8_STRING")
        )
        if prop is not None and prop.value:
            value = prop.value
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        name = window.get_wm_name()
    except XError:
        return None
    if name is None:
        return None
    return name.decode("latin-1") if isinstance(name, bytes) else str(name)
