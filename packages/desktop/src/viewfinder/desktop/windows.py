"""Which app a window belongs to, and waiting for an app's first window.

:func:`wait_for_window` waits until an app has a window on the screen: it asks the X
server (the X-Resource extension) which process owns each mapped top-level window, so
it tells one app's window from another's even when they start together.

A window on the screen is not yet a window that takes input: toolkits map a top-level
window first and its widgets when they handle the map (Tk's placer and packer map a
window's children only once the window itself is mapped), then draw them. A click in
between lands on the bare window. So once the window shows, the app is pinged
(``_NET_WM_PING``) :data:`READY_PINGS` times, each ping sent after the last answer: an
app answers a ping when its event loop gets to it, and the next one only after the
work that loop scheduled for later (mapping and drawing widgets) is done.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from pathlib import Path

import Xlib.display
import Xlib.error
from Xlib import X
from Xlib.ext import res

from viewfinder.desktop.apps import (
    WINDOW_TIMEOUT_S,
    App,
    AppStartError,
    WindowTimeoutError,
    group_members,
)
from viewfinder.xvfb.connection import close_quietly, open_display, x_errors

#: Pings an app answers in turn once its first window shows, before it counts as ready.
READY_PINGS = 3

#: An app that leaves a ping unanswered this long does not answer pings (some toolkits
#: never do): its window counts as ready as it is.
READY_PING_TIMEOUT_S = 1.0


def wait_for_window(app: App, display: str, timeout: float = WINDOW_TIMEOUT_S) -> int:
    """Wait until ``app`` (or a process of its group) has a mapped window; return its id.

    Once it shows, waits (within ``timeout`` too) until the app has handled its window's
    mapping: see :func:`wait_until_ready`.

    Raises :class:`AppStartError` with the app's output when it (and every process of its
    group) exits first, and
    :class:`WindowTimeoutError` when no window shows within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    delay = 0.005
    conn = open_display(display)
    try:
        while True:
            window = mapped_window_of_group(conn, app.pgid)
            if window is not None:
                app.window = window
                wait_until_ready(display, window, deadline)
                return window
            # a launcher may exit once it started the real app, which stays in its group
            if not app.is_running() and not group_members(app.pgid):
                code = app.returncode
                output = app.output_tail()
                raise AppStartError(
                    f"app {shlex.join(app.command)!r} exited"
                    + (f" with code {code}" if code is not None else "")
                    + " before it showed a window"
                    + (f"; its output ends with:\n{output}" if output else " (it printed nothing)")
                )
            if time.monotonic() >= deadline:
                raise WindowTimeoutError(
                    f"app {shlex.join(app.command)!r} showed no window on {display} within "
                    f"{timeout:g} s; it still runs. Pass wait_for_window=False (--no-wait) for "
                    "an app without a window, or a longer timeout"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
    finally:
        close_quietly(conn)


def wait_until_ready(display: str, window: int, deadline: float) -> bool:
    """Ping the app of ``window`` :data:`READY_PINGS` times in turn (each after the last
    was answered); True once all were answered, False when the app does not answer pings
    (:data:`READY_PING_TIMEOUT_S`), the window went away, or the ``deadline``
    (``time.monotonic()``) came first. Never raises for what the app does."""
    from viewfinder.xvfb.app_pings import AppPings

    try:
        pings = AppPings(display)
    except Exception:  # the display went away: the caller's next look says so
        return False
    try:
        for _ in range(READY_PINGS):
            number = pings.send(window)
            left = min(deadline - time.monotonic(), READY_PING_TIMEOUT_S)
            if number is None or left <= 0 or not pings.wait(number, left):
                return False
        return True
    except (Xlib.error.XError, Xlib.error.ConnectionClosedError, OSError):
        return False  # the window or the display went away meanwhile
    finally:
        pings.close()


def mapped_window_of_group(conn: Xlib.display.Display, pgid: int) -> int | None:
    """A mapped top-level window owned by a process of group ``pgid``, or None.

    Top-level windows are the root's children, or their children under a window manager
    that reparents them into frames. Their owners come from the X-Resource extension
    (``XResQueryClientIds``), which knows the pid of every local client.
    """
    with x_errors(conn.get_display_name()):
        candidates = []
        for child in conn.screen().root.query_tree().children:
            candidates.append(child)
            with contextlib.suppress(Xlib.error.XError):
                candidates.extend(child.query_tree().children)
        mapped = []
        for window in candidates:
            with contextlib.suppress(Xlib.error.XError):
                if window.get_attributes().map_state == X.IsViewable:
                    mapped.append(window.id)
        if not mapped:
            return None
        owners = _owners(conn, mapped)
    for window in mapped:
        pid = owners.get(window)
        if pid is not None and _group_of(pid) == pgid:
            return window
    return None


def _owners(conn: Xlib.display.Display, windows: list[int]) -> dict[int, int]:
    """The pid of each window's client: from X-Resource, else the ``_NET_WM_PID`` the
    client set (X servers without the extension)."""
    if conn.has_extension("X-Resource"):
        mask = conn.display.info.resource_id_mask
        reply = conn.res_query_client_ids(
            [{"client": window, "mask": res.LocalClientPIDMask} for window in windows]
        )
        by_client = {
            item.spec.client: int(item.value[0]) for item in reply.ids if len(item.value) == 1
        }
        return {
            window: by_client[window & ~mask] for window in windows if window & ~mask in by_client
        }
    atom = conn.intern_atom("_NET_WM_PID")
    found = {}
    for window in windows:
        with contextlib.suppress(Xlib.error.XError):
            prop = conn.create_resource_object("window", window).get_full_property(
                atom, X.AnyPropertyType
            )
            if prop is not None and len(prop.value):
                found[window] = int(prop.value[0])
    return found


def _group_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return None
