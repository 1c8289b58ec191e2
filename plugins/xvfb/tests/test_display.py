"""Display: readiness through -displayfd, clean stop, errors when Xvfb is missing or fails."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import Xlib.display

from viewfinder.core import DependencyMissingError
from viewfinder.core.testing import running, wait_until
from viewfinder.xvfb import Display, DisplayStartError, running_displays, server, sockets
from viewfinder.xvfb.reaping import reaping
from viewfinder.xvfb.testing import socket_left


def _leftovers(number: int, fbdir: Path | None) -> list[str]:
    paths = [sockets.lock_path(number), *([fbdir] if fbdir is not None else [])]
    left = [str(path) for path in paths if path.exists()]
    return left + ([str(sockets.socket_path(number))] if socket_left(number) else [])


def test_start_is_ready_and_stop_leaves_nothing() -> None:
    display = Display(320, 240).start()
    number, pid, fbdir = display.number, display.pid, display.fbdir
    assert pid is not None and fbdir is not None
    try:
        assert display.name == f":{number}"
        assert display.is_alive()
        assert display in running_displays()
        # ready means a client connects at once, no retry needed
        conn = Xlib.display.Display(display.name)
        screen = conn.screen()
        assert (screen.width_in_pixels, screen.height_in_pixels) == (320, 240)
        conn.close()
        assert display.framebuffer_path is not None and display.framebuffer_path.is_file()
        assert stat.S_ISSOCK(sockets.socket_path(number).stat().st_mode)
        if Path("/dev/shm").is_dir():
            assert fbdir.parent == Path("/dev/shm")
        assert display.env()["DISPLAY"] == display.name
    finally:
        display.stop()
    assert not display.is_alive()
    assert not server.pid_alive(pid)
    assert _leftovers(number, fbdir) == []
    assert display not in running_displays()
    display.stop()  # idempotent


def test_two_displays_at_once_get_different_numbers() -> None:
    with Display(200, 100) as first, Display(200, 100) as second:
        assert first.number != second.number
        assert first.pid != second.pid
        assert first.fbdir != second.fbdir


def test_killed_xvfb_leaves_nothing_after_stop(wait_until) -> None:
    display = Display(200, 100).start()
    number, fbdir, pid = display.number, display.fbdir, display.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not display.is_alive(), "Xvfb to die")
    # SIGKILL gave Xvfb no chance to remove its socket
    assert sockets.socket_path(number).exists()
    display.stop()
    assert _leftovers(number, fbdir) == []


def test_missing_xvfb_raises_dependency_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DependencyMissingError) as caught:
        Display().start()
    assert "apt-get install xvfb" in str(caught.value)
    assert "make setup" in str(caught.value)


def test_xvfb_exiting_early_raises_with_its_stderr() -> None:
    display = Display(200, 100, extra_args=["-no-such-option"])
    with pytest.raises(DisplayStartError) as caught:
        display.start()
    assert "no-such-option" in caught.value.stderr
    assert "no-such-option" in str(caught.value)
    assert not display.is_alive()


def test_xvfb_that_never_gets_ready_times_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A stand-in that never writes to -displayfd: only the timeout logic is under test.
    fake = tmp_path / "Xvfb"
    fake.write_text("#!/bin/sh\necho 'pretending to start' >&2\nexec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    display = Display(200, 100, start_timeout=0.5)
    with pytest.raises(DisplayStartError) as caught:
        display.start()
    assert "pretending to start" in caught.value.stderr
    assert "did not report a display number" in str(caught.value)


def test_start_twice_is_refused() -> None:
    with Display(200, 100) as display, pytest.raises(RuntimeError):
        display.start()


def test_properties_before_start_explain_themselves() -> None:
    display = Display(300, 200)
    assert display.size == (300, 200)
    assert display.pid is None and display.fbdir is None
    assert "not started" in repr(display)
    with pytest.raises(RuntimeError, match="start"):
        _ = display.number


OWNER = """
import sys
from viewfinder.xvfb import Display

display = Display(320, 240, die_with_owner={die!r}).start()
print(display.pid, flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("die", [True, False], ids=["dies-with-owner", "left-to-the-reaper"])
def test_a_killed_owner_takes_its_x_server_along_when_asked(die: bool) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER.format(die=die)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    xvfb = 0
    try:
        assert owner.stdout is not None
        xvfb = int(owner.stdout.readline())
        assert running(xvfb)
        # another test's serve/mcp/desktop start (another worker's) would reap it
        with reaping() as held:
            assert held
            owner.kill()  # SIGKILL: no cleanup runs in the owner
            owner.wait()
            if die:
                wait_until(lambda: not running(xvfb), "the X server to die with its owner")
            else:
                time.sleep(0.5)
                assert running(xvfb)  # the next serve/mcp/desktop start reaps it
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        server.reap_abandoned()
    assert not running(xvfb)
