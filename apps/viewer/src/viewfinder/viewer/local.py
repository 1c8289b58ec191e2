"""The viewer on loopback inside this process: uvicorn on its own thread and event loop.

Used by ``viewfinder view`` (in the main thread instead), the tests and the benchmark.
Port 0 picks a free port; :attr:`ViewerServer.url` says which.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn

from viewfinder.core.web_access import require_guard
from viewfinder.viewer.app import create_app
from viewfinder.viewer.errors import ViewerError
from viewfinder.viewer.settings import ViewerSettings


def bind(host: str, port: int, *, fallback: bool = False) -> socket.socket:
    """A listening socket on ``host:port``; with ``fallback``, a free port when it is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        if not fallback or port == 0:
            sock.close()
            raise
        sock.bind((host, 0))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def uvicorn_server(settings: ViewerSettings, log_level: str = "warning") -> uvicorn.Server:
    """A uvicorn server for the viewer of ``settings``."""
    config = uvicorn.Config(
        require_guard(create_app(settings)),
        log_level=log_level,
        ws="websockets-sansio",
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    return _Server(config)


class _Server(uvicorn.Server):
    """Stops on SIGINT, SIGTERM and SIGHUP (a closed terminal) and then exits normally:
    stopping the viewer is how it ends, not a failure (uvicorn raises the signal again)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class ViewerServer:
    """``with ViewerServer(settings) as viewer: viewer.url`` — started, then stopped."""

    def __init__(self, settings: ViewerSettings, start_timeout: float = 30.0) -> None:
        self.settings = settings
        self.start_timeout = start_timeout
        self.server = uvicorn_server(settings)
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` of the running viewer."""
        if self._socket is None:
            raise ViewerError("the viewer is not running; call start() first")
        host, port = self._socket.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    @property
    def app(self) -> object:
        return self.server.config.app

    def start(self) -> ViewerServer:
        self._socket = bind(self.settings.host, self.settings.port)
        server, sock = self.server, self._socket
        self._thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])),
            name="viewfinder-viewer-server",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise ViewerError("the viewer did not start (see its log)")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop serving: every live feed ends (idempotent)."""
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> ViewerServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
