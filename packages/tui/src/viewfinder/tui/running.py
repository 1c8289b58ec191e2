"""Running the TUI for real: ``viewfinder tui``'s environment, app, signals and deadline."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading

from textual.app import AutopilotCallbackType

from viewfinder.tui.app import ViewfinderApp, create_app
from viewfinder.tui.config import ViewfinderConfig, default_history_path
from viewfinder.tui.environment import ViewfinderEnvironment
from viewfinder.tui.history import CommandHistory
from viewfinder.tui.terminal import EXIT_GRACE_S, TerminalDriver, exit_deadline


async def run_tui(
    config: ViewfinderConfig,
    *,
    headless: bool = False,
    auto_pilot: AutopilotCallbackType | None = None,
    size: tuple[int, int] | None = None,
) -> None:
    """Start the environment ``config`` describes, run the app in it, clean up after.

    What ``viewfinder tui`` runs, with the command history kept in
    :func:`~viewfinder.tui.config.default_history_path`. ``headless``, ``auto_pilot``
    and ``size`` are Textual's, for driving the whole thing from a test or a script.
    """
    history = await asyncio.to_thread(
        CommandHistory.load, default_history_path(), max_entries=config.tui.history_size
    )
    async with ViewfinderEnvironment(config) as environment:
        app = create_app(environment=environment, history=history)
        # writes to a terminal that is gone or stalled never block the app (terminal.py)
        app.driver_class = TerminalDriver
        loop = asyncio.get_running_loop()
        # SIGTERM and SIGHUP (the terminal closed) quit as Ctrl+Q does: every process is
        # stopped and the environment cleaned up, not left behind; by a deadline, the
        # process ends whatever it waits for.
        stop = _Stop(app, loop, config.tui.kill_timeout + EXIT_GRACE_S)
        handled = []
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, stop.quit)
                # The loop hears of a signal through one byte on its wakeup socket, and
                # under a storm of signals (resizes) that byte was seen lost: the Python
                # handler runs whenever the signal came, and arms the deadline itself.
                signal.signal(signum, stop.on_signal)
                handled.append(signum)
        try:
            await app.run_async(headless=headless, auto_pilot=auto_pilot, size=size)
        finally:
            for signum in handled:
                loop.remove_signal_handler(signum)
    stop.cancel()  # ended in time, cleaned up


class _Stop:
    """What a stop signal does: arm the deadline (once), then quit as Ctrl+Q does."""

    def __init__(self, app: ViewfinderApp, loop: asyncio.AbstractEventLoop, deadline: float):
        self.app, self.loop, self.deadline = app, loop, deadline
        self._timer: threading.Timer | None = None
        self._quitting = False

    def on_signal(self, _signum: int, _frame: object) -> None:
        self._arm()
        self.loop.call_soon_threadsafe(self.quit)

    def quit(self) -> None:
        self._arm()
        if self._quitting:
            return
        self._quitting = True
        if self.app.is_running:
            self.app.call_later(self.app.action_quit)
        else:
            self.app.exit()

    def _arm(self) -> None:
        if self._timer is None:
            self._timer = exit_deadline(self.deadline)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
