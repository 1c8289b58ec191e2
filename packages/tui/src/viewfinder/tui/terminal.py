"""The TUI's terminal may go away or stop reading: the app ends anyway, in bounded time.

Textual writes to the terminal from a writer thread fed by a queue of 30 writes; the
app's own thread blocks on that queue when it is full. When the terminal is gone (its
pty closed: a write fails with EIO, the writer thread dies) or stalled (nobody reads
the pty: the write blocks in the kernel), the queue fills, and the app's shutdown,
which restores the terminal with a few more writes, blocks for ever: a `viewfinder tui`
whose terminal was gone ignored SIGHUP and SIGTERM for an hour. Two things make that
impossible:

- :class:`TerminalDriver` uses a writer thread whose writes wait at most
  :data:`WRITE_WAIT_S` for room and are dropped after that, once the thread died, or
  once a write failed: what a terminal that stopped reading would have shown is lost,
  never the process.
- :func:`exit_deadline` arms a deadline when a stop signal comes: if the app has not
  ended by then (whatever it waits for), its children's process groups are killed and
  the process exits with status 1.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from pathlib import Path
from queue import Full
from typing import IO, Any

from textual.drivers import linux_driver
from textual.drivers._writer_thread import WriterThread
from textual.drivers.linux_driver import LinuxDriver

log = logging.getLogger(__name__)

#: Longest a write waits for room in the queue before the terminal counts as stalled.
WRITE_WAIT_S = 2.0
#: Seconds from a stop signal to the forced exit, on top of the processes' kill timeout.
EXIT_GRACE_S = 10.0


class BoundedWriterThread(WriterThread):
    """Textual's writer thread, but a write never blocks for long: once the terminal
    failed a write or stalled, everything later is dropped."""

    def __init__(self, file: IO[str]) -> None:
        super().__init__(file)
        self.gone = threading.Event()

    def write(self, text: str) -> None:
        if self.gone.is_set() or (not self.is_alive() and self.ident is not None):
            return
        try:
            self._queue.put(text, timeout=WRITE_WAIT_S)
        except Full:
            self.gone.set()  # nobody reads the terminal: stop feeding it

    def run(self) -> None:
        try:
            super().run()
        except (OSError, ValueError):  # the terminal went away (EIO), or was closed
            self.gone.set()
            self._drain()

    def _drain(self) -> None:
        # take what is queued (and comes) until told to stop, so no writer waits for room
        while self._queue.get() is not None:
            pass

    def stop(self) -> None:
        try:
            self._queue.put(None, timeout=WRITE_WAIT_S)
        except Full:
            self.gone.set()
        self.join(timeout=WRITE_WAIT_S)


class TerminalDriver(LinuxDriver):
    """Textual's Linux driver with a :class:`BoundedWriterThread`."""

    def start_application_mode(self) -> None:
        # The driver makes its writer thread here by the module's name for the class.
        original = linux_driver.WriterThread
        linux_driver.WriterThread = BoundedWriterThread  # type: ignore[misc]
        try:
            super().start_application_mode()
        finally:
            linux_driver.WriterThread = original  # type: ignore[misc]


def exit_deadline(seconds: float) -> threading.Timer:
    """Start the deadline of a stop: after ``seconds``, end the process whatever it is
    waiting for (its children's process groups killed first). Cancel the returned timer
    once the app ended by itself."""
    timer = threading.Timer(seconds, _exit_now, args=(seconds,))
    timer.daemon = True
    timer.name = "tui-exit-deadline"
    timer.start()
    return timer


def _exit_now(seconds: float) -> None:
    for pgid in _child_groups():
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    message = f"viewfinder tui: still not ended {seconds:g} s after the stop signal; exiting\n"
    with contextlib.suppress(OSError):
        # a stalled terminal would hold a blocking write for ever: this one may be lost
        os.set_blocking(2, False)
        os.write(2, message.encode())
    os._exit(1)


def _child_groups() -> set[int]:
    """The process groups of this process's children (the managed processes each lead
    one; the display and the browser are children too), never our own."""
    me, own = os.getpid(), os.getpgrp()
    groups = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and int(fields[2]) != own:
            groups.add(int(fields[2]))
        elif int(fields[1]) == me:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)
    return groups


__all__: list[Any] = ["BoundedWriterThread", "TerminalDriver", "exit_deadline"]
