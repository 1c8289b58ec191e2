"""Which display runs is asked of the kernel, not read off ``/tmp/.X11-unix``; a display
is stopped so that it can never remove the socket file of a server that took its number
after it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import Xlib.display

from viewfinder.xvfb import Display, server, sockets
from viewfinder.xvfb.reaping import reaping
from viewfinder.xvfb.testing import HandStartedXvfb, socket_left


@pytest.fixture
def unused_number() -> Iterator[int]:
    """A display number nothing listens as, from a range no other test starts in."""
    number = next(n for n in range(7300, 7400) if not sockets.listening_inodes(n))
    yield number
    sockets.socket_path(number).unlink(missing_ok=True)


def test_a_stale_socket_file_is_not_a_running_display(unused_number: int) -> None:
    # what a SIGKILLed X server leaves: a socket file nobody listens on
    path = sockets.socket_path(unused_number)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    assert path.exists()
    assert not sockets.display_listening(unused_number)
    server.remove_display_files(unused_number, pid=os.getpid())
    assert not path.exists()


def test_a_running_display_whose_file_was_removed_still_runs_and_keeps_its_number() -> None:
    with Display(64, 48) as display:
        path = sockets.socket_path(display.number)
        assert sockets.display_listening(display.number)
        path.unlink()  # as a cleaner of /tmp would
        assert sockets.display_listening(display.number)  # on its abstract name
        assert display.pid is not None
        assert sockets.holds_display(display.pid, display.number)
        assert server.display_held_by(display.pid) == display.number
        Xlib.display.Display(display.name).close()  # and clients still reach it
    assert not sockets.display_listening(display.number)


def test_a_stop_removes_the_socket_file_while_the_server_still_holds_the_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Xvfb's own clean-up on SIGTERM frees the number before it unlinks its file by
    name, so a server that takes the number in between would lose its new file. The
    stop unlinks the file while the number is still held, then SIGKILLs the server,
    which then never touches the path."""
    kill = os.kill
    seen: list[tuple[int, bool, bool]] = []

    def watching(pid: int, sig: int) -> None:
        if pid == watched:
            seen.append((sig, path.exists(), sockets.holds_display(pid, number)))
        kill(pid, sig)

    for stop in ("display", "hand-started"):
        started: Display | HandStartedXvfb = (
            Display(64, 48).start() if stop == "display" else HandStartedXvfb(64, 48)
        )
        pid = started.pid if isinstance(started, Display) else started.process.pid
        assert pid is not None
        watched, number = pid, started.number
        path = sockets.socket_path(number)
        assert path.exists()
        seen.clear()
        with monkeypatch.context() as patched:
            patched.setattr(server.os, "kill", watching)
            started.stop()
        assert seen == [(signal.SIGKILL, False, True)], stop
        assert not server.pid_alive(pid) and not socket_left(number)


def test_a_reaped_server_of_a_dead_owner_leaves_no_socket_file() -> None:
    """reap_abandoned() finds the number by the socket the server holds: a server started
    with -displayfd writes no lock file that would name it."""
    code = (
        "import os, sys\n"
        "from viewfinder.xvfb import Display\n"
        "display = Display(64, 48).start()\n"
        "print(display.number, display.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    owner = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    number, pid = (int(word) for word in owner.stdout.readline().split())
    with reaping() as held:  # another worker's server start would reap it first
        assert held
        owner.kill()  # its display outlives it, as a SIGKILLed server's does
        owner.wait(10)
        assert server.pid_alive(pid) and not sockets.lock_path(number).exists()
        assert pid in server.reap_abandoned()  # the same process may take its turn again
    assert not server.pid_alive(pid)
    assert not socket_left(number)


TURN = (
    "from viewfinder.xvfb.reaping import reaping\n"
    "with reaping(timeout=0.3) as turn:\n"
    "    print(turn)\n"
)


def test_clean_ups_take_turns_and_one_kept_waiting_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # whatever temporary folder each process has (a test kit set this one's; TMPDIR)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def other_gets_a_turn() -> bool:
        done = subprocess.run(
            [sys.executable, "-c", TURN],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env={**os.environ, "TMPDIR": str(elsewhere)},
        )
        return done.stdout.strip() == "True"

    with reaping() as held:
        assert held
        with reaping() as again:  # re-entrant in one process
            assert again
        assert not other_gets_a_turn()  # skipped after its 0.3 s, not blocked
    assert other_gets_a_turn()
