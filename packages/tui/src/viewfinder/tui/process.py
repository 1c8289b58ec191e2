"""One managed process: its subprocess, the tasks reading its output, and its facts."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

from viewfinder.tui.events import EventBus, ProcessExited, ProcessOutput, Stream
from viewfinder.tui.output import LineSplitter, OutputBuffer

#: Bytes read from a pipe at a time; one read becomes one ProcessOutput batch.
READ_CHUNK = 256 * 1024
#: How long output may keep coming after the process exited (a child that inherited its
#: pipes can hold them open); then reading stops so ProcessExited is not held back.
DRAIN_TIMEOUT = 2.0
#: Seconds between exit checks where pidfds are not available.
EXIT_POLL_INTERVAL = 0.05


def _open_pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux >= 5.3
        return None


class ProcessInfo(BaseModel):
    """A snapshot of what is known about one managed process."""

    model_config = ConfigDict(frozen=True)

    id: str
    command: str
    args: tuple[str, ...]
    cwd: str | None
    pid: int
    started_at: datetime
    ended_at: datetime | None = None
    running: bool
    exit_code: int | None = None
    killed: bool = False
    last_line: str | None = None
    output_lines: int = 0

    def running_time(self, now: datetime) -> timedelta:
        """Time since the start, up to ``now`` or to the end when it ended."""
        end = self.ended_at if self.ended_at is not None else now
        return max(end - self.started_at, timedelta(0))

    @property
    def status(self) -> str:
        """``running``, ``killed``, ``exited 0`` or ``failed 3``."""
        if self.running:
            return "running"
        if self.killed:
            return "killed"
        if self.exit_code == 0:
            return "exited 0"
        return f"failed {self.exit_code}"

    @property
    def command_line(self) -> str:
        return " ".join([self.command, *self.args])


class ManagedProcess:
    """A spawned process, the pipe readers feeding its buffer and the watch on its end.

    The pipes are read with event-loop readers straight into the bounded buffer and,
    batched per read, onto the bus. The end of the process is seen through a pidfd (a
    file descriptor that becomes readable when the process exits), not through the
    pipes closing: a child that inherited the pipes may keep them open for long. Once
    the process has exited and its pipes are drained (or :data:`DRAIN_TIMEOUT` passed),
    :class:`ProcessExited` is published and :attr:`exited` is set; nothing about this
    process is published after that.
    """

    def __init__(
        self,
        process_id: str,
        popen: subprocess.Popen[bytes],
        *,
        command: str,
        args: tuple[str, ...],
        cwd: str | None,
        started_at: datetime,
        buffer_lines: int,
        bus: EventBus,
        clock: Callable[[], datetime],
        on_exit: Callable[[int], object] | None = None,
    ) -> None:
        self.id = process_id
        self.popen = popen
        self.pid = popen.pid
        self.command = command
        self.args = args
        self.cwd = cwd
        self.started_at = started_at
        self.ended_at: datetime | None = None
        self.exit_code: int | None = None
        self.killed = False
        self.buffer = OutputBuffer(buffer_lines)
        #: Set when the process itself has ended (its output may still be draining).
        self.ended = asyncio.Event()
        #: Set once ProcessExited was published.
        self.exited = asyncio.Event()
        self._bus = bus
        self._clock = clock
        self._on_exit = on_exit
        self._loop = asyncio.get_running_loop()
        self._open_pipes: dict[int, tuple[Stream, LineSplitter]] = {}
        self._drained = asyncio.Event()
        for name, pipe in (("stdout", popen.stdout), ("stderr", popen.stderr)):
            if pipe is not None:
                fd = pipe.fileno()
                os.set_blocking(fd, False)
                self._open_pipes[fd] = (name, LineSplitter())  # type: ignore[assignment]
                self._loop.add_reader(fd, self._on_readable, fd)
        if not self._open_pipes:
            self._drained.set()
        self._pidfd = _open_pidfd(self.pid)
        if self._pidfd is not None:
            self._loop.add_reader(self._pidfd, self._poll_exit)
        else:
            self._poll_handle: asyncio.TimerHandle | None = None
            self._schedule_poll()
        self._watcher = asyncio.create_task(self._watch(), name=f"{process_id} watcher")

    @property
    def running(self) -> bool:
        return not self.exited.is_set()

    @property
    def pgid(self) -> int:
        """The process group: the process leads its own (it was started in a new session)."""
        return self.pid

    def info(self) -> ProcessInfo:
        last = self.buffer.last()
        return ProcessInfo(
            id=self.id,
            command=self.command,
            args=self.args,
            cwd=self.cwd,
            pid=self.pid,
            started_at=self.started_at,
            ended_at=self.ended_at,
            running=self.running,
            exit_code=self.exit_code,
            killed=self.killed,
            last_line=last.text if last is not None else None,
            output_lines=self.buffer.total,
        )

    # -- output -------------------------------------------------------------------

    def _on_readable(self, fd: int) -> None:
        name, splitter = self._open_pipes[fd]
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            lines = splitter.feed(chunk)
            if lines:
                self._publish(name, lines)
            return
        self._close_pipe(fd)

    def _close_pipe(self, fd: int) -> None:
        name, splitter = self._open_pipes.pop(fd)
        self._loop.remove_reader(fd)
        rest = splitter.flush()
        if rest:
            self._publish(name, rest)
        pipe = self.popen.stdout if name == "stdout" else self.popen.stderr
        if pipe is not None:
            pipe.close()
        if not self._open_pipes:
            self._drained.set()

    def _publish(self, name: Stream, lines: list[str]) -> None:
        self.buffer.extend(name, lines)
        self._bus.publish(ProcessOutput(self.id, name, tuple(lines)))

    # -- the end ------------------------------------------------------------------

    def _poll_exit(self) -> None:
        if self.ended.is_set():
            return
        if self.popen.poll() is None:  # waitpid(WNOHANG): reaps it once it exited
            if self._pidfd is None:
                self._schedule_poll()
            return
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self.ended.set()

    def _schedule_poll(self) -> None:
        self._poll_handle = self._loop.call_later(EXIT_POLL_INTERVAL, self._poll_exit)

    async def _watch(self) -> None:
        try:
            await self.ended.wait()
            # When a child still holds the pipes, stop reading so the exit gets told.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._drained.wait(), DRAIN_TIMEOUT)
        except asyncio.CancelledError:
            # The event loop is shutting down while the process runs on: stop watching
            # but do not pretend it ended; ProcessManager.kill() ends it without the loop.
            self._stop_watching()
            raise
        for fd in list(self._open_pipes):
            self._close_pipe(fd)
        self._record_end()
        self._bus.publish(
            ProcessExited(
                self.id,
                self.pid,
                self.exit_code if self.exit_code is not None else -1,
                self.ended_at,  # type: ignore[arg-type]
                self.killed,
            )
        )
        self.exited.set()

    def _record_end(self) -> None:
        self.exit_code = self.popen.returncode
        self.ended_at = self._clock()
        if self._on_exit is not None:
            self._on_exit(self.pgid)

    def _stop_watching(self) -> None:
        for fd in list(self._open_pipes):
            self._loop.remove_reader(fd)
        self._open_pipes.clear()
        for pipe in (self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                pipe.close()
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    @property
    def watched(self) -> bool:
        """False once the event loop that watched it is gone (the process may still run)."""
        return not self._watcher.done()

    def end_unwatched(self) -> None:
        """Record the end of a process reaped without its event loop (no event is sent:
        that loop's subscribers are gone)."""
        self._record_end()
        self.exited.set()
