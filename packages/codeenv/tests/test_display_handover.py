"""A pooled display lent to a session after one that ran ``xhost +`` on it admits the
new session's user and no other local user (real sandboxes, real Xvfb, as root)."""

from __future__ import annotations

import os
import subprocess

from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeEnvironment
from viewfinder.xvfb import DisplayPool, access

#: The session's code opens its display to every local user, as ``xhost +`` does.
OPEN_WIDE = """
import subprocess
subprocess.run(["xhost", "+"], check=True)
"""
#: A user id that is no session's.
STRANGER = 64993


def _connect_as(uid: int, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
         "xdpyinfo", "-display", name],
        capture_output=True, text=True, timeout=30, env={"PATH": os.environ["PATH"]},
    )  # fmt: skip


def test_a_display_opened_wide_by_one_session_is_closed_for_the_next() -> None:
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    with DisplayPool(size=1, width=320, height=240) as pool:
        first = CodeEnvironment(CodeEnvConfig(width=320, height=240), displays=pool)
        first.reset()
        try:
            opened = first.step(CodeAction(code=OPEN_WIDE, timeout_s=60))
            assert opened.exit_code == 0, opened.stderr
            assert first.display is not None
            name = first.display.name
            assert not access.access_control_enabled(name)
            assert _connect_as(STRANGER, name).returncode == 0  # anyone may connect now
        finally:
            first.close()

        second = CodeEnvironment(CodeEnvConfig(width=320, height=240), displays=pool)
        second.reset()
        try:
            assert second.display is not None and second.display.name == name  # lent again
            assert second.worker is not None and second.worker.uid is not None
            assert access.access_control_enabled(name)
            assert sorted(access.admitted(name)) == sorted(
                [f"SI:localuser:#{second.worker.uid}", "SI:localuser:#0"]
            )
            refused = _connect_as(STRANGER, name)
            assert refused.returncode != 0 and "Authorization required" in refused.stderr
            assert _connect_as(second.worker.uid, name).returncode == 0
        finally:
            second.close()
