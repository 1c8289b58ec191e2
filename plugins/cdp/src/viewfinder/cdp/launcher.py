"""Starting and stopping a headless Chromium with a DevTools endpoint on loopback.

Each browser gets a fresh temporary directory holding its profile, its stderr log and
its XDG config/cache directories (where Chromium's crash reporter keeps its database),
so nothing is written to the user's home and every process of that browser, even the
crash handlers that leave its process group, names the directory on its command line.
:meth:`ChromiumProcess.stop` uses that to leave nothing behind.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from viewfinder.cdp.errors import ChromiumLaunchError
from viewfinder.core import DependencyMissingError
from viewfinder.core.lifetime import popen_dying_with_parent

#: Environment variable naming the Chromium executable to use.
CHROMIUM_ENV = "VIEWFINDER_CHROMIUM"
#: Executables looked up on PATH, in order.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Prefix of every temporary browser directory; handy when hunting leftovers.
TEMP_PREFIX = "viewfinder-chromium-"

#: Flags every launch uses. We run in containers, as root, without a network: no
#: sandbox (it needs user namespaces root containers rarely have), no GPU, and nothing
#: that phones home or waits for a first-run dialog.
BASE_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--hide-scrollbars",
    "--mute-audio",
    # No idle renderer kept ready for the next page: it costs memory in every browser,
    # and a page opened after a renderer hung would land in that renderer if it hung too.
    "--disable-features=SpareRendererForSitePerProcess",
    "--remote-debugging-address=127.0.0.1",
    # Port 0: the OS picks a free port, which Chromium reports back; no races for 9222.
    "--remote-debugging-port=0",
)

# Longest temporary directory that leaves room for Chromium's singleton socket path.
_MAX_ROOT_LENGTH = 60

_INSTALL_HINT = "Install it with `apt-get install chromium` (or run `make setup`)"
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


def find_chromium() -> str:
    """The Chromium executable: ``$VIEWFINDER_CHROMIUM``, else the first of
    :data:`CHROMIUM_NAMES` on PATH. Raises :class:`DependencyMissingError` otherwise."""
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise DependencyMissingError(
                "chromium",
                f"${CHROMIUM_ENV} is {configured!r}, which is not an executable. "
                f"Point it at a Chromium binary or unset it. {_INSTALL_HINT}.",
            )
        return found
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise DependencyMissingError(
        "chromium",
        f"Looked for {', '.join(CHROMIUM_NAMES)} on PATH. {_INSTALL_HINT}, "
        f"or set ${CHROMIUM_ENV} to its path.",
    )


class ChromiumProcess:
    """A running Chromium started by :func:`launch_chromium`.

    ``ws_url`` is the browser websocket, ``http_url`` the debugging address
    (``http://127.0.0.1:<port>``). :meth:`stop` ends the browser and removes its
    temporary profile; it is idempotent, runs on leaving a ``with`` / ``async with``
    block, and at interpreter exit for browsers nobody stopped.
    """

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        *,
        ws_url: str,
        root: Path,
        executable: str,
    ) -> None:
        self.process = process
        self.ws_url = ws_url
        self.port = int(ws_url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        self.http_url = f"http://127.0.0.1:{self.port}"
        self.executable = executable
        self.root = root
        self.user_data_dir = root / "profile"
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def pid(self) -> int:
        """Process id of the browser (also the id of its process group)."""
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stderr_tail(self, limit: int = 2000) -> str:
        """The end of the browser's stderr, without the D-Bus noise containers produce."""
        return _stderr_tail(self.root / "stderr.log", limit)

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the browser's process group, kill it after ``timeout`` seconds, reap
        stray helpers and remove the temporary profile. Safe to call more than once."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        _LIVE.discard(self)
        _end_group(self.process, timeout)
        _end_stragglers(str(self.root), timeout)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ChromiumProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> ChromiumProcess:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.stop)

    def __repr__(self) -> str:
        state = "running" if self.running else f"exited {self.process.returncode}"
        return f"ChromiumProcess(pid={self.pid}, ws_url={self.ws_url!r}, {state})"


def launch_chromium(
    *,
    headless: bool = True,
    width: int = 1280,
    height: int = 800,
    extra_args: Sequence[str] = (),
    timeout: float = 30.0,
    executable: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ChromiumProcess:
    """Start Chromium with remote debugging on 127.0.0.1 and a fresh temporary profile.

    ``env``: the environment it runs in (default ``os.environ``), e.g. a display's
    ``display.env()`` to show it there with the display's accessibility buses.

    Returns once the DevTools endpoint is up (at most ``timeout`` seconds). Raises
    :class:`DependencyMissingError` when no Chromium is installed and
    :class:`ChromiumLaunchError` (with the end of its stderr) when it does not start.
    """
    binary = executable or find_chromium()
    root = _make_root()
    profile = root / "profile"
    profile.mkdir()
    env = dict(os.environ if env is None else env)
    env["XDG_CONFIG_HOME"] = str(root / "config")
    env["XDG_CACHE_HOME"] = str(root / "cache")
    # Chromium's own temporary files, among them its singleton socket, go here too.
    env["TMPDIR"] = str(root)
    args = [
        binary,
        *(["--headless"] if headless else []),
        *BASE_FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        *extra_args,
        "about:blank",
    ]
    stderr_path = root / "stderr.log"
    with stderr_path.open("wb") as stderr:
        # stderr goes to a file, not a pipe: Chromium writes a lot of it and would block
        # on a pipe nobody drains. Its own session lets stop() end the whole group.
        # Chromium ends with the thread that started it, even when this process is
        # killed with SIGKILL and can clean up nothing.
        process = popen_dying_with_parent(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=env,
            start_new_session=True,
        )
    try:
        ws_url = _wait_for_devtools(process, profile, stderr_path, timeout)
    except BaseException:
        _end_group(process, 5.0)
        _end_stragglers(str(root), 5.0)
        shutil.rmtree(root, ignore_errors=True)
        raise
    browser = ChromiumProcess(process, ws_url=ws_url, root=root, executable=binary)
    _remember(browser)
    return browser


def _make_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    if len(str(root)) <= _MAX_ROOT_LENGTH or not Path("/tmp").is_dir():
        return root
    # Chromium aborts ("Socket path too long") when the path of its singleton socket,
    # <TMPDIR>/org.chromium.Chromium.XXXXXX/SingletonSocket, passes the 107 characters
    # a Unix socket path may have. A deep temporary directory gets a short one instead.
    root.rmdir()
    return Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir="/tmp"))


def _wait_for_devtools(
    process: subprocess.Popen[bytes], profile: Path, stderr_path: Path, timeout: float
) -> str:
    deadline = time.monotonic() + timeout
    while True:
        ws_url = _read_active_port(profile) or _read_listening_line(stderr_path)
        if ws_url:
            return ws_url
        if process.poll() is not None:
            raise ChromiumLaunchError(
                f"Chromium exited with code {process.returncode} before opening its DevTools "
                f"endpoint. Its stderr ends with:\n{_stderr_tail(stderr_path)}"
            )
        if time.monotonic() > deadline:
            raise ChromiumLaunchError(
                f"Chromium did not open its DevTools endpoint within {timeout:g}s. "
                f"Its stderr ends with:\n{_stderr_tail(stderr_path)}"
            )
        time.sleep(0.05)


def _read_active_port(profile: Path) -> str | None:
    # Chromium writes "<port>\n/devtools/browser/<id>" once the endpoint listens.
    try:
        lines = (profile / "DevToolsActivePort").read_text().splitlines()
    except OSError:
        return None
    if len(lines) < 2 or not lines[0].strip().isdigit() or not lines[1].startswith("/devtools/"):
        return None  # not completely written yet
    return f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}"


def _read_listening_line(stderr_path: Path) -> str | None:
    try:
        text = stderr_path.read_text(errors="replace")
    except OSError:
        return None
    match = _LISTENING.search(text)
    return match.group(1) if match else None


def _stderr_tail(path: Path, limit: int = 2000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no stderr)"
    lines = [line for line in text.splitlines() if "dbus" not in line.lower()]
    return "\n".join(lines)[-limit:] or "(empty)"


def _end_group(process: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM the process group, SIGKILL it after ``timeout``, then kill what is left.

    A browser reaped before this call (it crashed, or was killed) is not signalled by
    its group id: once its whole group had ended, the kernel may have handed that number
    to an unrelated process group. Its helpers, which name the profile folder, are found
    by :func:`_end_stragglers` instead.
    """
    if process.poll() is not None:
        return
    _signal_group(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        _signal_group(process.pid, signal.SIGKILL)
        process.wait(max(timeout, 5.0))  # SIGKILL ends even a stopped process at once
    # Helpers (zygotes, renderers) can outlive the browser by a moment; while one does,
    # the group's id cannot be reused.
    _signal_group(process.pid, signal.SIGKILL)


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _end_stragglers(marker: str, timeout: float) -> None:
    """Wait for, then kill, processes outside the group that still use our directory
    (the crash handlers Chromium starts in sessions of their own)."""
    deadline = time.monotonic() + timeout
    while True:
        pids = list(processes_mentioning(marker))
        if not pids:
            return
        if time.monotonic() > deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.05)


def processes_mentioning(marker: str) -> Iterable[int]:
    """Ids of live processes whose command line contains ``marker`` (Linux ``/proc``)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return
    me = os.getpid()
    needle = marker.encode()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # exited while we looked
        if needle in cmdline and state != "Z":
            yield int(entry.name)


# -- the net for browsers nobody stopped ---------------------------------------------

_LIVE: set[ChromiumProcess] = set()
_registered = False
_registry_lock = threading.Lock()


def _remember(browser: ChromiumProcess) -> None:
    global _registered
    with _registry_lock:
        _LIVE.add(browser)
        if not _registered:
            atexit.register(_stop_all)
            _registered = True


def _stop_all() -> None:
    for browser in list(_LIVE):
        browser.stop(timeout=2.0)
