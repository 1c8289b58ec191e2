"""Running the Xvfb program: launch with ``-displayfd`` readiness, stop, and clean up after it.

Both :class:`~viewfinder.xvfb.display.Display` (a display owned by this process) and
the ``viewfinder display`` registry (long-lived, detached displays) start Xvfb through
:func:`launch`, so the readiness rule lives in one place: Xvfb is ready exactly when it
writes its display number to the ``-displayfd`` pipe. It writes it only after it is
listening, so nothing here sleeps or polls lock files.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from viewfinder.core.errors import DependencyMissingError
from viewfinder.core.lifetime import popen_dying_with_parent
from viewfinder.xvfb.errors import DisplayStartError
from viewfinder.xvfb.reaping import reaping
from viewfinder.xvfb.sockets import (
    display_held_by,
    display_listening,
    holds_display,
    lock_owner,
    lock_path,
    socket_path,
)

log = logging.getLogger(__name__)

XVFB_PROGRAM = "Xvfb"
INSTALL_HINT = "Install it with `apt-get install xvfb` (Debian/Ubuntu) or run `make setup`."
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
    die_with_parent: bool = False,
) -> Launched:
    """Start ``Xvfb -displayfd <fd> <args>`` and return once it reports its display number.

    Xvfb's stderr goes to ``log_path`` (a pipe nobody reads could fill up and block
    the server). ``detached`` starts it in a new session, so it outlives this process
    and a Ctrl-C in our terminal does not reach it. ``die_with_parent`` has it killed
    when the calling thread ends, even by SIGKILL of the process (see
    :mod:`viewfinder.core.lifetime`); otherwise a display whose owner was killed waits
    for :func:`reap_abandoned`. Raises :class:`DisplayStartError` with Xvfb's stderr
    when it exits early or stays silent for ``timeout`` seconds.
    """
    binary = xvfb_binary()
    read_fd, write_fd = os.pipe()
    try:
        with open(log_path, "wb") as log:
            start = (
                popen_dying_with_parent if die_with_parent and not detached else subprocess.Popen
            )
            process = start(
                [binary, "-displayfd", str(write_fd), *args],
                pass_fds=(write_fd,),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=detached,
                # who it belongs to, for reap_abandoned() should this process be killed
                env=os.environ if detached else {**os.environ, OWNER_ENV: _me()},
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


def terminate(
    pid: int,
    *,
    timeout: float,
    child: subprocess.Popen[bytes] | None = None,
    gently: bool = True,
) -> None:
    """SIGTERM ``pid``, wait up to ``timeout`` seconds, then SIGKILL; reap it if it is our
    child. ``gently=False``: SIGKILL at once, and wait up to ``timeout`` for the end."""
    if child is not None and child.poll() is not None:
        return  # already reaped: the pid may belong to someone else by now
    signals = ((signal.SIGTERM, timeout),) if gently else ()
    for sig, wait in (*signals, (signal.SIGKILL, 5.0 if gently else timeout)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            break
        if _wait_exit(pid, wait, child):
            break
    _reap(pid, child)


def stop_server(
    pid: int,
    number: int | None,
    *,
    child: subprocess.Popen[bytes] | None = None,
    timeout: float = 5.0,
) -> None:
    """End the Xvfb ``pid`` that serves display ``number`` and remove what it leaves
    (waiting up to ``timeout`` seconds for the process to be gone).

    Not by SIGTERM: Xvfb's own clean-up closes its abstract socket, which frees the
    number, before it unlinks its socket file by name, so an X server that takes the
    number in between loses its new file to it (clients that look for the file, a
    sandbox that binds it, then miss a live display). Here the file is unlinked while
    ``pid`` still holds the number, so it can only be its own, and ``pid`` is then
    SIGKILLed: it never touches the path again.
    """
    if child is None or child.poll() is None:
        if number is not None and holds_display(pid, number):
            with contextlib.suppress(FileNotFoundError):
                socket_path(number).unlink()
        terminate(pid, timeout=timeout, child=child, gently=False)
    if number is not None:
        remove_display_files(number, pid)


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


#: Set in the environment of every Xvfb that lives only as long as the process that
#: started it: ``<pid>:<start time>`` of that process.
OWNER_ENV = "VIEWFINDER_XVFB_OWNER"
#: A framebuffer folder no process uses is left alone this long (it may be one that a
#: display being started right now has just made).
ABANDONED_AFTER_S = 60.0


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _me() -> str:
    return f"{os.getpid()}:{_start_time(os.getpid())}"


def _owner_alive(owner: str) -> bool:
    pid, _, started = owner.partition(":")
    return pid.isdigit() and pid_alive(int(pid)) and _start_time(int(pid)) == started


def reap_abandoned() -> list[int]:
    """Stop the Xvfb servers whose owner died without stopping them (a SIGKILLed
    ``viewfinder serve``), and remove their sockets, lock files and framebuffer folders,
    and framebuffer folders no process uses. Detached displays (``viewfinder display
    --detach``) have no owner and are never touched. Returns the pids stopped."""
    with reaping() as turn:
        if not turn:
            log.warning("another clean-up of abandoned displays took too long; skipped")
            return []
        return _reap_abandoned()


def _reap_abandoned() -> list[int]:
    stopped = []
    used: set[str] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        fbdir = argument_after(argv, b"-fbdir")
        owner = next(
            (
                item.split(b"=", 1)[1].decode()
                for item in environ
                if item.startswith(OWNER_ENV.encode() + b"=")
            ),
            None,
        )
        if owner is None or _owner_alive(owner) or not is_xvfb(pid):
            if fbdir is not None:
                used.add(fbdir)
            continue
        stop_server(pid, display_held_by(pid))
        if fbdir is not None and Path(fbdir).name.startswith("viewfinder-xvfb-"):
            shutil.rmtree(fbdir, ignore_errors=True)
        stopped.append(pid)
    parent = default_fbdir_parent() or Path(tempfile.gettempdir())
    for folder in parent.glob("viewfinder-xvfb-*"):
        with contextlib.suppress(OSError):
            if str(folder) not in used and time.time() - folder.stat().st_mtime > ABANDONED_AFTER_S:
                shutil.rmtree(folder, ignore_errors=True)
    return stopped


def argument_after(argv: list[bytes], flag: bytes) -> str | None:
    for index, item in enumerate(argv[:-1]):
        if item == flag:
            return argv[index + 1].decode(errors="replace")
    return None


def remove_display_files(number: int, pid: int) -> None:
    """Remove what an Xvfb of display ``number`` (process ``pid``) left behind.

    A cleanly stopped Xvfb removes its socket (and lock file, when it made one) itself;
    one killed with SIGKILL leaves them. By now another Xvfb may already have taken the
    number, so the lock goes only when it names ``pid`` or nobody alive, and the socket
    only when no server listens on the number (:func:`display_listening`).
    """
    owner = lock_owner(number)
    if owner is None or owner == pid or not pid_alive(owner):
        with contextlib.suppress(FileNotFoundError):
            lock_path(number).unlink()
    path = socket_path(number)
    if path.exists() and not display_listening(number):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
