"""``viewfinder mcp`` over stdio: one client, one session, until stdin closes or a signal.

stdin is read through the event loop (a non-blocking pipe) rather than a thread
blocked in ``read()``: a stop signal then ends the server at once, whether or not the
client still holds stdin open. The descriptor itself is moved out of reach first (fd 0
reads ``/dev/null``), so no program the session starts can read the client's messages;
the SDK does the same with fd 1, whose writes go to stderr while the server runs.

On the way out, whatever the reason, the session is closed before the process exits:
its apps, sandbox, browser and display. Stop signals that arrive meanwhile (an SDK
client sends SIGTERM two seconds after closing stdin) wait for that to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, cast

import anyio

from mcp.server.stdio import stdio_server
from viewfinder.core import Tool
from viewfinder.mcp.options import DesktopOptions
from viewfinder.mcp.server import build_server
from viewfinder.mcp.sessions import SessionRegistry

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: The longest JSON-RPC message line read from stdin (a tool call's code, say).
MAX_LINE = 64 * 1024 * 1024
SESSION_KEY = "stdio"


def serve_stdio(
    tools: Mapping[str, Tool], options: DesktopOptions, withheld: Mapping[str, str] | None = None
) -> int:
    """Serve ``tools`` on stdin/stdout until stdin closes (0) or a stop signal
    (128 + its number); the session is closed before this returns."""
    registry = SessionRegistry(options)
    server = build_server(tools, registry, lambda ctx: SESSION_KEY, withheld=withheld)
    stopped_by: list[int] = []
    try:
        anyio.run(_serve, server, stopped_by)
    finally:
        with _stop_signals_deferred():
            closed = asyncio.run(registry.close_all())
    why = f"signal {signal.Signals(stopped_by[0]).name}" if stopped_by else "stdin closed"
    _say(f"stopped ({why}); closed {closed} session(s) and everything they started")
    return 128 + stopped_by[0] if stopped_by else 0


async def _serve(server: Any, stopped_by: list[int]) -> None:
    async with (
        _stdin_lines() as stdin,
        stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream),
        anyio.create_task_group() as group,
    ):

        async def watch_signals() -> None:
            with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
                async for signum in signals:
                    stopped_by.append(int(signum))
                    group.cancel_scope.cancel()
                    # the SDK's transport waits for its reader: stdin ends here for it
                    stdin.end()
                    return

        group.start_soon(watch_signals)
        _say("serving over stdio")
        await server.run(read_stream, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()  # stdin closed: the client is gone


class _Lines:
    """The lines of a pipe, read by the event loop; ends at end of file."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def end(self) -> None:
        """End the lines now, as if the pipe was closed."""
        self.reader.feed_eof()

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


@contextlib.asynccontextmanager
async def _stdin_lines() -> AsyncIterator[_Lines]:
    """stdin's lines, with fd 0 pointed at /dev/null meanwhile (and put back after)."""
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    pipe = os.fdopen(private, "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
    except ValueError:  # a regular file: the loop cannot watch it; it never blocks anyway
        reader.feed_data(pipe.read())
        reader.feed_eof()
        transport = None
    try:
        yield _Lines(reader)
    finally:
        if transport is not None:
            transport.close()
        with contextlib.suppress(OSError):
            os.dup2(private, 0)
        pipe.close()


@contextlib.contextmanager
def _stop_signals_deferred() -> Iterator[None]:
    """Stop signals are noted, not obeyed, inside the block (cleanup must finish)."""
    if threading.current_thread() is not threading.main_thread():  # pragma: no cover
        yield
        return
    before = {signum: signal.signal(signum, _note_signal) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _note_signal(signum: int, frame: object) -> None:
    log.info("%s while closing the sessions: finishing that first", signal.Signals(signum).name)


def _say(message: str) -> None:
    print(f"viewfinder mcp: {message}", file=sys.stderr, flush=True)
