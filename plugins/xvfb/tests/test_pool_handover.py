"""A display given back to the pool is handed out as fresh as a new one: whatever a
client did to the server's access control and selections is undone on release."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import Xlib.display
from Xlib import X

from viewfinder.xvfb import DisplayPool, access

#: User ids no session and no test process has: "another local user".
STRANGER = 64997
GUEST = 64995

#: A client that opens the display wide, lets a stranger in by name, takes the
#: CLIPBOARD on the root window (no window of its own, so no window clean-up ends it)
#: and stays connected.
TAMPER = """
import sys, Xlib.display
from Xlib import X
conn = Xlib.display.Display()
conn.set_access_control(X.DisableAccess)
conn.screen().root.set_selection_owner(conn.intern_atom("CLIPBOARD"), X.CurrentTime)
conn.sync()
print("done", flush=True)
sys.stdin.read()
"""


def _connect_as(uid: int, name: str) -> subprocess.CompletedProcess[str]:
    """``xdpyinfo`` on ``name`` as user ``uid``: whether that user may connect."""
    return subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
         "xdpyinfo", "-display", name],
        capture_output=True, text=True, timeout=30, env={"PATH": os.environ["PATH"]},
    )  # fmt: skip


@pytest.fixture
def pool() -> Iterator[DisplayPool]:
    with DisplayPool(size=1, width=320, height=240) as opened:
        yield opened


def test_a_display_opened_wide_is_closed_again_for_the_next_user(pool: DisplayPool) -> None:
    assert os.geteuid() == 0, "connecting as other users needs root, as CI has"
    display = pool.acquire(timeout=30)
    display.admit(GUEST)
    tamper = subprocess.Popen(
        [sys.executable, "-c", TAMPER],
        env=display.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert tamper.stdout is not None and tamper.stdout.readline().strip() == "done"
        subprocess.run(
            ["xhost", f"+si:localuser:#{STRANGER}"], env=display.env(), check=True,
            capture_output=True, timeout=30,
        )  # fmt: skip
        assert not access.access_control_enabled(display.name)
        assert _connect_as(STRANGER, display.name).returncode == 0  # wide open now
        pool.release(display)

        again = pool.acquire(timeout=30)
        assert again is display  # the same X server, handed out again
        again.admit(GUEST + 1)
        assert access.access_control_enabled(again.name)
        assert sorted(access.admitted(again.name)) == sorted(
            [f"SI:localuser:#{GUEST + 1}", f"SI:localuser:#{os.getuid()}"]
        )
        refused = _connect_as(STRANGER, again.name)
        assert refused.returncode != 0 and "Authorization required" in refused.stderr
        assert _connect_as(GUEST, again.name).returncode != 0  # the last session's user
        assert _connect_as(GUEST + 1, again.name).returncode == 0  # the new one's
        conn = Xlib.display.Display(again.name)
        try:
            assert conn.get_selection_owner(conn.intern_atom("CLIPBOARD")) == X.NONE
        finally:
            conn.close()
        pool.release(again)
    finally:
        tamper.kill()
        tamper.wait(timeout=30)
