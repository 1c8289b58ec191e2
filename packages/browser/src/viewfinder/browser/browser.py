"""The browser that sessions' pages live in: launched here, or attached to.

Without a CDP URL (argument or ``$VIEWFINDER_CDP_URL``) a local headless Chromium is
launched on first use, shared by every session that uses this :class:`Browser`, and
launched again when it has exited (crashed, or killed). With one, nothing is
launched: the URL (``ws://...``, ``http://host:port`` or ``host:port``) is where
sessions connect, and that browser is left running.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading

from viewfinder.cdp import ChromiumProcess, launch_chromium, resolve_cdp_url

#: Seconds to wait for a browser whose connection dropped to be seen exiting.
EXIT_GRACE = 3.0


class Browser:
    """A local Chromium launched on demand, or an external browser at ``cdp_url``.

    Thread-safe: sessions on their own threads ask :meth:`endpoint` concurrently and
    at most one Chromium is launched. :meth:`stop` ends a launched browser (and is
    what leaving a ``with`` block does); an attached browser is never stopped.
    """

    def __init__(
        self,
        cdp_url: str | None = None,
        *,
        width: int = 1280,
        height: int = 800,
        launch_timeout: float = 30.0,
    ) -> None:
        self.cdp_url = resolve_cdp_url(cdp_url)
        self.width = width
        self.height = height
        self.launch_timeout = launch_timeout
        self.process: ChromiumProcess | None = None
        self.launches = 0
        self._lock = threading.Lock()

    @property
    def attached(self) -> bool:
        """True when this browser is an external one at :attr:`cdp_url`."""
        return self.cdp_url is not None

    def endpoint(self, lost: str | None = None) -> str:
        """Where to connect: the CDP URL, or the websocket of a running local Chromium,
        launching one (again) when none is running. Blocks while launching.

        ``lost`` is an endpoint whose connection just dropped. A browser that was killed
        closes its sockets a moment before it is seen to have exited, so for that
        endpoint we wait a little for the exit before believing it still runs.
        """
        if self.cdp_url is not None:
            return self.cdp_url
        with self._lock:
            process = self.process
            if process is not None and lost == process.ws_url:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.process.wait(EXIT_GRACE)
            if process is not None and process.running:
                return process.ws_url
            if process is not None:  # it exited: clean up what it left, start afresh
                process.stop()
            self.process = launch_chromium(
                width=self.width, height=self.height, timeout=self.launch_timeout
            )
            self.launches += 1
            return self.process.ws_url

    def stop(self) -> None:
        """Stop a Chromium this object launched; idempotent. An attached one keeps running."""
        with self._lock:
            process, self.process = self.process, None
        if process is not None:
            process.stop()

    def kill_unresponsive(self) -> None:
        """Kill a launched Chromium that stopped answering, without the grace a clean
        stop gives; the next :meth:`endpoint` launches a new one. No-op when attached."""
        with self._lock:
            process, self.process = self.process, None
        if process is not None:
            process.stop(timeout=0)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        if self.cdp_url is not None:
            return f"Browser(attached to {self.cdp_url})"
        return f"Browser(launched: {self.process!r})"
