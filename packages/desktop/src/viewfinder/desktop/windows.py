"""Which app a window belongs to, and waiting for an app's first window.

:func:`wait_for_window` waits until an app has a window on the screen: it asks the X
server (the X-Resource extension) which process owns each mapped top-level window, so
it tells one app's window from another's even when they start together.
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


def wait_for_window(app: App, display: str, timeout: float = WINDOW_TIMEOUT_S) -> int:
    """Wait until ``app`` (or a process of its group) has a mapped window; return its id.

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
