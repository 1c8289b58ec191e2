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
        deadline = config.tui.kill_timeout + EXIT_GRACE_S
        stopping: list[threading.Timer] = []
        handled = []
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, _quit_soon, app, stopping, deadline)
                handled.append(signum)
        try:
            await app.run_async(headless=headless, auto_pilot=auto_pilot, size=size)
        finally:
            for signum in handled:
                loop.remove_signal_handler(signum)
    for timer in stopping:  # ended in time, cleaned up
        timer.cancel()


def _quit_soon(app: ViewfinderApp, stopping: list[threading.Timer], deadline: float) -> None:
    if not stopping:
        stopping.append(exit_deadline(deadline))
    if app.is_running:
        app.call_later(app.action_quit)
    else:
        app.exit()
