"""For tests of agents on real apps: an app that says what happens to it, one line each.

:class:`LoggedApp` starts a program (a GTK form run with the system Python, say) on a
display, waits for its ``ready`` line, and then hands its lines out as they come
(:meth:`LoggedApp.wait_for`), so a test can assert that a click landed where the app
felt it.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence

from viewfinder.core.errors import ViewfinderError


class AppLogTimeoutError(ViewfinderError, TimeoutError):
    """An app did not say what a test waited for in time."""


class LoggedApp:
    """``command`` running with ``env``; its standard output read line by line.

    Waits up to ``timeout`` s for the line ``ready``. Stop it with :meth:`stop` (or a
    ``with`` block): it is killed and reaped.
    """

    def __init__(
        self, command: Sequence[str], env: Mapping[str, str], *, timeout: float = 30.0
    ) -> None:
        self.process = subprocess.Popen(
            list(command),
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True, name="app-log")
        self._reader.start()
        try:
            self.wait_for("ready", timeout=timeout)
        except BaseException:
            self.stop()
            raise

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)  # the app closed its output: it has ended

    def wait_for(self, wanted: str, *, timeout: float = 10.0) -> list[str]:
        """The lines the app said up to and including ``wanted``;
        :class:`AppLogTimeoutError` when it does not say it within ``timeout`` s."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise AppLogTimeoutError(
                    f"the app ended (exit {self.process.wait()}) before saying {wanted!r}; "
                    f"it said {seen}"
                )
            seen.append(line)
            if line == wanted:
                return seen
        raise AppLogTimeoutError(f"the app did not say {wanted!r} in {timeout} s; it said {seen}")

    def said(self) -> list[str]:
        """The lines said since the last look, without waiting."""
        lines: list[str] = []
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                return lines
            if line is not None:
                lines.append(line)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self._reader.join(timeout=5)  # it reads to the end of the output, then stops
        if self.process.stdout is not None and not self._reader.is_alive():
            self.process.stdout.close()

    def __enter__(self) -> LoggedApp:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
