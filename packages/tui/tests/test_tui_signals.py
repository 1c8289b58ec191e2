"""The TUI in a real terminal, ended by a signal: none of its processes is left.

`viewfinder tui` runs on a pty with `!run sleep N` (N unique to the test); then the TUI
gets SIGTERM, SIGHUP (the terminal went away) or SIGKILL, or the user presses Ctrl-Q.
Afterwards no `sleep N` runs, and (but after SIGKILL) no temporary folder is left.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import random
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .test_terminal_safety import _alive, _read_until


def pump_until(fd: int, predicate: Callable[[], object], what: str, timeout: float) -> None:
    """Keep reading the TUI's terminal (it must never block on it) until ``predicate``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            with contextlib.suppress(OSError):  # the TUI closed the terminal
                os.read(fd, 65536)


def sleepers(seconds: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if (
            cmdline[1:2] == [str(seconds).encode()]
            and cmdline[0].endswith(b"sleep")
            and state != "Z"
        ):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP", "SIGKILL", "ctrl-q"])
def test_a_tui_ended_any_way_leaves_no_process(how: str, tmp_path: Path) -> None:
    seconds = random.randrange(40_000, 49_999)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path)}
    env["TMPDIR"] = str(temp)
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-m", "viewfinder.cli", "tui"], env)
    seen = bytearray()
    try:
        _read_until(fd, seen, b"!help", timeout=60)
        os.write(fd, f"!run sleep {seconds}".encode())
        os.write(fd, b"\r")
        pump_until(fd, lambda: sleepers(seconds), "the sleep to start", timeout=30)
        if how == "ctrl-q":
            os.write(fd, b"\x11")
        else:
            os.kill(pid, getattr(signal, how))
        pump_until(fd, lambda: not _alive(pid), f"the TUI to end on {how}", timeout=30)
        pump_until(fd, lambda: not sleepers(seconds), f"its sleep to end on {how}", timeout=20)
        if how != "SIGKILL":  # a killed process removes nothing; its children still end
            assert list(temp.iterdir()) == []
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        for leftover in sleepers(seconds):
            os.kill(leftover, signal.SIGKILL)
        os.close(fd)


def _storm(fd: int, pid: int, resizes: int) -> None:
    """Resize the terminal over and over: each resize makes the TUI draw the whole
    screen, more than a terminal that reads nothing can hold."""
    for index in range(resizes):
        rows, columns = 30 + index % 20, 100 + index % 50
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        os.kill(pid, signal.SIGWINCH)
        time.sleep(0.01)


def _threads(pid: int) -> list[str]:
    """What each thread of ``pid`` is doing, for a failure's message."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
            wchan = (task / "wchan").read_text()
            found.append(f"{(task / 'comm').read_text().strip()} {state} {wchan}")
    return found


def _waits_for_end(pid: int, timeout: float) -> bool:
    """Whether ``pid`` ended (and was reaped) within ``timeout`` s, reading nothing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("terminal", ["gone", "stalled"])
def test_a_tui_whose_terminal_is_gone_or_stalled_still_ends(terminal: str, tmp_path: Path) -> None:
    # gone: the terminal's pty closed (SIGHUP, then every write fails); stalled: the
    # terminal reads nothing any more and the TUI gets SIGTERM. Either used to leave the
    # TUI waiting for ever on a full queue of writes.
    seconds = random.randrange(50_000, 59_999)
    env = {**os.environ, "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path)}
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-m", "viewfinder.cli", "tui"], env)
    seen = bytearray()
    reaped = False
    try:
        _read_until(fd, seen, b"!help", timeout=60)
        os.write(fd, f"!run sleep {seconds}\r".encode())
        pump_until(fd, lambda: sleepers(seconds), "the sleep to start", timeout=30)
        if terminal == "gone":
            os.close(fd)
        else:
            _storm(fd, pid, resizes=200)
            os.kill(pid, signal.SIGTERM)
        # the deadline is the kill timeout (5 s) and 10 s more; well within this bound
        reaped = _waits_for_end(pid, timeout=45)
        assert reaped, f"the TUI did not end with its terminal {terminal}: {_threads(pid)}"
        deadline = time.monotonic() + 20
        while sleepers(seconds) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not sleepers(seconds), "its sleep was left running"
    finally:
        if not reaped:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        for leftover in sleepers(seconds):
            os.kill(leftover, signal.SIGKILL)
        if terminal != "gone":
            os.close(fd)
