"""``viewfinder mcp`` over stdio: one client, one session, until stdin closes or a signal.

stdin is read through the event loop (a non-blocking pipe) rather than a thread
blocked in ``read()``: a stop signal then ends the server at once, whether or not the
client still holds stdin open. The descriptor itself is moved out of reach first (fd 0
reads ``/dev/null``), so no program the session starts can read the client's messages;
the SDK does the same with fd 1, whose writes go to stderr while the server runs.

On the way out, whatever the reason, the session is closed before the process exits:
its apps, sandbox, browser and display. Stop signals that arrive meanwhile (an SDK
client sends SIGTERM two seconds after closing stdin) wait for that to finish, and the
exit status stays the first signal's. A client that dies mid-call (its end of stdout
closed under an answer) is a client gone, like stdin closed: status 0. A message line
longer than :data:`MAX_LINE` is answered with one error (its ``id`` read from the line's
head) and skipped; the server reads on.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any, cast

import anyio
import mcp_types

from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from viewfinder.core import Tool
from viewfinder.mcp.options import DesktopOptions
from viewfinder.mcp.server import build_server
from viewfinder.mcp.sessions import SessionRegistry

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: The longest JSON-RPC message line read from stdin (a tool call's code, say).
MAX_LINE = 64 * 1024 * 1024
SESSION_KEY = "stdio"
#: JSON-RPC's code for a request that is not a valid one.
INVALID_REQUEST = -32600
#: How much of an oversized line is read for its ``id``.
_HEAD = 4096
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')
#: What a client that went away leaves when an answer is written to it.
_CLIENT_GONE = (BrokenPipeError, ConnectionResetError)


def serve_stdio(
    tools: Mapping[str, Tool], options: DesktopOptions, withheld: Mapping[str, str] | None = None
) -> int:
    """Serve ``tools`` on stdin/stdout until stdin closes (0) or a stop signal
    (128 + its number); the session is closed before this returns."""
    registry = SessionRegistry(options)
    server = build_server(tools, registry, lambda ctx: SESSION_KEY, withheld=withheld)
    signals = _StopSignals()
    why = "stdin closed"
    # One handler for the stop signals from start to end, not the event loop's (asyncio
    # puts back the default, death, when its watch ends): the session is closed first
    # whenever a signal comes, and the status is the first signal's.
    with signals.installed():
        try:
            anyio.run(_serve, server, signals)
        except BaseException as exc:
            if not _only(exc, _CLIENT_GONE):
                raise
            why = "the client went away"
        finally:
            closed = asyncio.run(registry.close_all())
    if signals.first:
        why = f"signal {signal.Signals(signals.first).name}"
    _say(f"stopped ({why}); closed {closed} session(s) and everything they started")
    return 128 + signals.first if signals.first else 0


def _only(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    """Whether ``exc`` is one of ``kinds``, or a group of nothing else."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_only(inner, kinds) for inner in exc.exceptions)
    return isinstance(exc, kinds)


async def _serve(server: Any, signals: _StopSignals) -> None:
    async with (
        _stdin_lines() as stdin,
        stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream),
        anyio.create_task_group() as group,
    ):

        async def refuse(request_id: str | int | None, size: int) -> None:
            if request_id is None:  # a notification: nobody waits for an answer
                return
            error = mcp_types.ErrorData(
                code=INVALID_REQUEST,
                message=f"this message is over {MAX_LINE // (1024 * 1024)} MiB "
                f"({size} bytes or more) and was not read; send less at once (code of "
                "a run_code call, say, in a file the code reads)",
            )
            message = mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
            await write_stream.send(SessionMessage(message))

        stdin.on_oversized = refuse

        def stop() -> None:
            group.cancel_scope.cancel()
            # the SDK's transport waits for its reader: stdin ends here for it
            stdin.end()

        signals.watch(asyncio.get_running_loop(), stop)
        _say("serving over stdio")
        await server.run(read_stream, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()  # stdin closed: the client is gone


class _Lines:
    """The lines of a pipe, read by the event loop; ends at end of file. A line longer
    than the reader's limit is skipped, and ``on_oversized(id, size)`` told of it."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader
        self.on_oversized: Callable[[str | int | None, int], Awaitable[None]] | None = None

    def end(self) -> None:
        """End the lines now, as if the pipe was closed."""
        self.reader.feed_eof()

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                line = end.partial
            except asyncio.LimitOverrunError:
                await self._skip_line()
                continue
            if not line:
                raise StopAsyncIteration
            return line.decode("utf-8", errors="replace")

    async def _skip_line(self) -> None:
        head = await self.reader.read(_HEAD)  # the rest of the line stays in the buffer
        size = len(head)
        while True:
            try:
                size += len(await self.reader.readuntil(b"\n"))
                break
            except asyncio.IncompleteReadError as end:  # the pipe closed within the line
                size += len(end.partial)
                break
            except asyncio.LimitOverrunError as over:
                size += len(await self.reader.read(max(1, over.consumed)))
        found = _ID.search(head)
        request_id: str | int | None = None
        if found is not None:
            token = found[1].decode("utf-8", errors="replace")
            request_id = json.loads(token)
        log.warning("a message of %d bytes is over the %d-byte limit: skipped", size, MAX_LINE)
        if self.on_oversized is not None:
            await self.on_oversized(request_id, size)


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


class _StopSignals:
    """SIGTERM, SIGINT, SIGHUP: the first is remembered (the exit status) and, while the
    event loop serves, stops it; any later one is only logged (cleanup must finish)."""

    def __init__(self) -> None:
        self.first = 0
        self._stop: Callable[[], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
        """Call ``stop`` on ``loop`` at the first signal (at once if one came already)."""
        self._loop, self._stop = loop, stop
        if self.first:
            stop()

    def _handle(self, signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        if self.first:
            log.info("%s while the server stops: finishing that first", name)
            return
        self.first = signum
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop)

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():  # pragma: no cover
            yield
            return
        before = {signum: signal.signal(signum, self._handle) for signum in STOP_SIGNALS}
        try:
            yield
        finally:
            self._loop = self._stop = None
            for signum, handler in before.items():
                signal.signal(signum, handler)


def _say(message: str) -> None:
    print(f"viewfinder mcp: {message}", file=sys.stderr, flush=True)
