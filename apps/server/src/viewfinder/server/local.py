"""A server on loopback inside this process: uvicorn on its own thread and event loop.

Used by ``CodingEnv.local()``, the tests of the wire protocol and the benchmark. Port
0 picks a free port; :attr:`LocalServer.base_url` says which.
"""

from __future__ import annotations

import asyncio
import threading
import time

import uvicorn

from viewfinder.server.app import cancel_steps, create_app, uvicorn_server
from viewfinder.server.errors import ServerError
from viewfinder.server.settings import ServerSettings


class LocalServer:
    """``with LocalServer(settings) as server: server.base_url`` — started, then stopped."""

    def __init__(
        self, settings: ServerSettings | None = None, *, port: int = 0, start_timeout: float = 60.0
    ) -> None:
        self.settings = (settings or ServerSettings()).with_changes(port=port)
        self.start_timeout = start_timeout
        self.app = create_app(self.settings)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT`` of the running server."""
        if self.port is None:
            raise ServerError("the local server is not running; call start() first")
        host = f"[{self.settings.host}]" if ":" in self.settings.host else self.settings.host
        return f"http://{host}:{self.port}"

    def start(self) -> LocalServer:
        """Start serving and return once the server accepts connections."""
        server = uvicorn_server(
            self.app,
            host=self.settings.host,
            port=self.settings.port,
            log_level="warning",
            lifespan="on",
        )
        self._server = server
        self._thread = threading.Thread(
            target=lambda: asyncio.run(server.serve()), name="viewfinder-local-server", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not server.started:
            if not self._thread.is_alive():
                raise ServerError("the local server exited while starting (see its log)")
            if time.monotonic() > deadline:
                self.stop()
                raise ServerError(f"the local server did not start within {self.start_timeout:g} s")
            time.sleep(0.01)
        sockets = [sock for srv in server.servers for sock in srv.sockets]
        self.port = int(sockets[0].getsockname()[1])
        return self

    def stop(self, timeout: float = 60.0) -> None:
        """Stop serving: every session is closed and every display stopped (idempotent)."""
        server, thread = self._server, self._thread
        if server is not None:
            cancel_steps(self.app)
            server.should_exit = True
        if thread is not None:
            thread.join(timeout)
        self._server = self._thread = None
        self.port = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
