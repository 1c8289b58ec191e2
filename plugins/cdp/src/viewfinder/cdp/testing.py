"""A test kit for code that drives pages: a loopback web server, a free port, a leak guard.

>>> with serve_pages({"/": "<title>hi</title>"}) as base_url:    # doctest: +SKIP
...     backend = CdpBackend(url=base_url + "/")
"""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from viewfinder.cdp.launcher import TEMP_PREFIX, ChromiumProcess, processes_mentioning

_active_guard: Path | None = None


def _handler_for(pages: Mapping[str, str]) -> type[http.server.BaseHTTPRequestHandler]:
    class PageHandler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path.split("?", 1)[0])
            if body is None:
                self.send_error(404)
                return
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output quiet

    return PageHandler


@contextlib.contextmanager
def serve_pages(pages: Mapping[str, str]) -> Iterator[str]:
    """Serve ``pages`` (path -> HTML) on 127.0.0.1 in a thread; yield the base URL.

    The mapping is read on every request, so a test may add pages while it runs.
    """
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(pages))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _browsers_mentioning(base: Path) -> list[int]:
    """The Chromium processes (a browser, a helper, a crash handler) whose command line
    names ``base``. Other programs may name it too (a code sandbox whose session folder
    the tests made there, still closing): they are not what this guard is for."""
    found = []
    for pid in processes_mentioning(str(base)):
        try:
            program = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
        except OSError:
            continue  # exited while we looked
        if b"chrom" in Path(program.decode(errors="replace")).name.lower().encode():
            found.append(pid)
    return found


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@contextlib.contextmanager
def chromium_leak_guard(prefix: str = "vfcdp-", grace: float = 15.0) -> Iterator[Path]:
    """Fail if a Chromium started inside the block outlives it.

    Every temporary directory made inside the block (browser profiles, crash databases)
    goes under one new directory, which is the marker: each Chromium process carries
    such a path on its command line. On exit, any process still naming the directory
    (a browser, a helper, a crash handler; they may take a moment to leave, hence
    ``grace`` seconds) or any profile left in it raises ``AssertionError``. Keep
    ``prefix`` short: Chromium's socket path below it is limited in length. Reentrant:
    a guard inside a guard uses the outer one's directory and leaves the check to it.
    """
    global _active_guard
    if _active_guard is not None:
        # Already inside a guard (two test folders with guards run in one session): the
        # outer one checks everything; nesting would only lengthen Chromium's paths.
        yield _active_guard
        return
    base = Path(tempfile.mkdtemp(prefix=prefix))
    _active_guard = base
    previous, tempfile.tempdir = tempfile.tempdir, str(base)
    try:
        yield base
    finally:
        tempfile.tempdir = previous
        _active_guard = None
        deadline = time.monotonic() + grace
        left = _browsers_mentioning(base)
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = _browsers_mentioning(base)
        profiles = sorted(path.name for path in base.glob(f"{TEMP_PREFIX}*"))
        shutil.rmtree(base, ignore_errors=True)
        assert not left, f"Chromium processes started by the tests are still running: {left}"
        assert not profiles, f"temporary browser profiles were not removed: {profiles}"


def renderer_pids(browser: ChromiumProcess) -> list[int]:
    """The renderer processes of ``browser`` (one per page or site, as Chromium chose)."""
    found = []
    for pid in processes_mentioning(str(browser.root)):
        with contextlib.suppress(OSError):  # exited while we looked
            if b"--type=renderer" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


@contextlib.contextmanager
def stopped(pids: list[int]) -> Iterator[None]:
    """The processes ``pids`` hung for real (SIGSTOP) inside the block, continued after."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
