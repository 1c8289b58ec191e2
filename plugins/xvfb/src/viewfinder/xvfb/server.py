"""Running the Xvfb program: launch with ``-displayfd`` readiness, stop, and clean up after it.

Both :class:`~viewfinder.xvfb.display.Display` (a display owned by this process) and
the ``viewfinder display`` registry (long-lived, detached displays) start Xvfb through
:func:`launch`, so the readiness rule lives in one place: Xvfb is ready exactly when it
writes its display number to the ``-displayfd`` pipe. It writes it only after it is
listening, so nothing here sleeps or polls lock files.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from viewfinder.core.errors import DependencyMissingError
from viewfinder.xvfb.errors import DisplayStartError

XVFB_PROGRAM = "Xvfb"
INSTALL_HINT = "Install it with `apt-get install xvfb` (Debian/Ubuntu) or run `make setup`."
SOCKET_DIR = Path("/tmp/.X11-unix")
#: Arguments every Xvfb we start gets. ``-noreset``: by default an X server resets when
#: its last client disconnects, dropping connections made meanwhile and re-creating its
#: framebuffer file, which would leave our map of the old one stale.
COMMON_ARGS = ("-nolisten", "tcp", "-noreset")
#: The name Xvfb gives screen 0's framebuffer file inside ``-fbdir``.
FRAMEBUFFER_FILE = "Xvfb_screen0"


def xvfb_binary() -> str:
    """The path of the Xvfb program, or :class:`DependencyMissingError` saying how to get it."""
    found = shutil.which(XVFB_PROGRAM)
    if found is None:
        raise DependencyMissingError(XVFB_PROGRAM, INSTALL_HINT)
    return found


def default_fbdir_parent() -> Path | None:
    """Where framebuffer files go: ``/dev/shm`` (RAM) when there is one, else the temp dir."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return None


def screen_args(width: int, height: int, depth: int, dpi: int | None) -> list[str]:
    """Xvfb arguments for one screen of the given size."""
    if width <= 0 or height <= 0:
        raise ValueError(f"display size must be positive, got {width}x{height}")
    if depth not in (8, 16, 24, 30):
        raise ValueError(f"display depth must be 8, 16, 24 or 30, got {depth}")
    args = ["-screen", "0", f"{width}x{height}x{depth}"]
    if dpi is not None:
        args += ["-dpi", str(int(dpi))]
    return args


@dataclass
class Launched:
    """A running Xvfb: its process, the display number it reported and its log file."""

    process: subprocess.Popen[bytes]
    number: int
    log_path: Path


def launch(
    args: Sequence[str],
    *,
    log_path: Path,
    timeout: float,
    detached: bool = False,
) -> Launched:
    """Start ``Xvfb -displayfd <fd> <args>`` and return once it reports its display number.

    Xvfb's stderr goes to ``log_path`` (a pipe nobody reads could fill up and block
    the server). ``detached`` starts it in a new session, so it outlives this process
    and a Ctrl-C in our terminal does not reach it. Raises :class:`DisplayStartError`
    with Xvfb's stderr when it exits early or stays silent for ``timeout`` seconds.
    """
    binary = xvfb_binary()
    read_fd, write_fd = os.pipe()
    try:
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                [binary, "-displayfd", str(write_fd), *args],
                pass_fds=(write_fd,),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=detached,
            )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        # Only Xvfb may hold the write end: then end-of-file means it exited.
        os.close(write_fd)
    try:
        number = _read_display_number(read_fd, process, timeout, log_path)
    except BaseException:
        terminate(process.pid, timeout=2.0, child=process)
        raise
    finally:
        os.close(read_fd)
    return Launched(process=process, number=number, log_path=log_path)


def _read_display_number(
    fd: int, process: subprocess.Popen[bytes], timeout: float, log_path: Path
) -> int:
    deadline = time.monotonic() + timeout
    received = b""
    while not received.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DisplayStartError(
                f"Xvfb (pid {process.pid}) did not report a display number within "
                f"{timeout:g}s; the machine may be overloaded (raise start_timeout)",
                read_log(log_path),
            )
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 64)
        if not chunk:
            code = _wait_briefly(process)
            raise DisplayStartError(
                f"Xvfb exited before it was ready (exit code {code})",
                read_log(log_path),
                code,
            )
        received += chunk
    try:
        return int(received.strip())
    except ValueError:
        raise DisplayStartError(
            f"Xvfb wrote {received!r} to -displayfd instead of a display number",
            read_log(log_path),
        ) from None


def _wait_briefly(process: subprocess.Popen[bytes]) -> int | None:
    # The pipe closed because Xvfb is exiting; give it a moment so its exit code and
    # last words are there for the error message.
    try:
        return process.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        return None


def read_log(path: Path) -> str:
    """Xvfb's stderr as text ('' when there is no log)."""
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


# -- liveness and stopping --------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust kill(0)
    # the state letter follows the parenthesised command name, which may hold spaces
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def is_xvfb(pid: int) -> bool:
    """True when ``pid`` runs the Xvfb program (guards against recycled pids)."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    except OSError:
        return pid_alive(pid)
    return os.path.basename(argv0.decode(errors="replace")) == XVFB_PROGRAM


def terminate(pid: int, *, timeout: float, child: subprocess.Popen[bytes] | None = None) -> None:
    """SIGTERM ``pid``, wait up to ``timeout`` seconds, then SIGKILL; reap it if it is our child."""
    if child is not None and child.poll() is not None:
        return  # already reaped: the pid may belong to someone else by now
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            break
        if _wait_exit(pid, wait, child):
            break
    _reap(pid, child)


def _wait_exit(pid: int, timeout: float, child: subprocess.Popen[bytes] | None) -> bool:
    if child is not None:
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    # Not our child: no wait() to block on, so watch it with a deadline.
    deadline = time.monotonic() + timeout
    delay = 0.002
    while time.monotonic() < deadline:
        _reap(pid, None)
        if not pid_alive(pid):
            return True
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    return not pid_alive(pid)


def _reap(pid: int, child: subprocess.Popen[bytes] | None) -> None:
    if child is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=0)
        return
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


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


def remove_display_files(number: int, pid: int) -> None:
    """Remove what an Xvfb of display ``number`` (process ``pid``) left behind.

    A cleanly stopped Xvfb removes its socket (and lock file, when it made one) itself;
    one killed with SIGKILL leaves them. By now another Xvfb may already have taken the
    number, so the lock goes only when it names ``pid`` or nobody alive, and the socket
    only when nothing answers on it.
    """
    owner = lock_owner(number)
    if owner is None or owner == pid or not pid_alive(owner):
        with contextlib.suppress(FileNotFoundError):
            lock_path(number).unlink()
    path = socket_path(number)
    if path.exists() and not _socket_answers(path):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _socket_answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(str(path))
        except OSError:  # refused: a stale socket file nobody listens on
            return False
    return True
