"""Where an X display is on this machine: its socket file and abstract name, its lock
file, and which process listens as which display number.

The socket file alone says little: an X server killed with SIGKILL leaves a stale one,
and a cleaner of ``/tmp`` (or a racing server, see
:func:`~viewfinder.xvfb.server.stop_server`) may remove a live server's. Liveness and
ownership are asked of the kernel instead: a connection to the abstract name and the
listening sockets in ``/proc/net/unix``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

SOCKET_DIR = Path("/tmp/.X11-unix")


def _x_listeners() -> Iterator[tuple[str, str]]:
    """``(display number, "socket:[inode]")`` of every socket listening as an X display
    (its abstract name or its file), from ``/proc/net/unix``; none elsewhere."""
    prefix = f"{SOCKET_DIR}/X"
    with contextlib.suppress(OSError), open("/proc/net/unix") as table:
        for line in table:
            fields = line.split()
            if len(fields) >= 8 and fields[7].lstrip("@").startswith(prefix):
                yield fields[7].lstrip("@")[len(prefix) :], f"socket:[{fields[6]}]"


def listening_inodes(number: int) -> set[str]:
    """The ``socket:[inode]`` names of the sockets listening as display ``number``
    (its abstract name and its file); empty elsewhere than Linux."""
    return {inode for listening, inode in _x_listeners() if listening == str(number)}


def _socket_links(pid: int) -> set[str]:
    try:
        return {os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()}
    except OSError:
        return set()


def holds_display(pid: int, number: int) -> bool:
    """Whether process ``pid`` holds a socket listening as display ``number``."""
    inodes = listening_inodes(number)
    return bool(inodes) and bool(inodes & _socket_links(pid))


def display_held_by(pid: int) -> int | None:
    """The display number the X server ``pid`` listens as, or None."""
    links = _socket_links(pid)
    return next(
        (int(number) for number, inode in _x_listeners() if inode in links and number.isdigit()),
        None,
    )


def lock_path(number: int) -> Path:
    return Path(f"/tmp/.X{number}-lock")


def socket_path(number: int) -> Path:
    return SOCKET_DIR / f"X{number}"


def lock_owner(number: int) -> int | None:
    """The pid written in display ``number``'s lock file, or None."""
    try:
        return int(lock_path(number).read_text().strip())
    except (OSError, ValueError):
        return None


def display_listening(number: int) -> bool:
    """Whether an X server listens on display ``number`` on this machine.

    Asked on the abstract socket first (Linux; what Xlib tries first), then on the
    socket file: the file alone says neither, as a SIGKILLed server leaves a stale one
    and a cleaner of ``/tmp`` may remove a live server's. An X server binds its abstract
    name before its file, so a server that has just taken the number answers there even
    while its file is not listening yet.
    """
    names = [str(socket_path(number))]
    if sys.platform.startswith("linux"):
        names.insert(0, "\0" + names[0])
    return any(_socket_answers(name) for name in names)


def _socket_answers(address: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(address)
        except OSError:  # refused: a stale socket file nobody listens on
            return False
    return True
