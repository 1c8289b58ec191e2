"""The ProcessManager: spawn, watch, kill and read the output of long-running processes."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from viewfinder.core import lifetime
from viewfinder.tui import process_groups
from viewfinder.tui.errors import (
    CommandNotFoundError,
    DuplicateProcessError,
    SpawnError,
    UnknownProcessError,
)
from viewfinder.tui.events import (
    DEFAULT_MAX_EVENTS,
    EventBus,
    EventSubscription,
    ProcessStarted,
)
from viewfinder.tui.output import OutputLine
from viewfinder.tui.process import ManagedProcess, ProcessInfo

log = logging.getLogger(__name__)

#: Seconds between checks of whether the groups of ended leaders still hold processes.
GROUP_SWEEP_INTERVAL = 0.5
#: Seconds between SIGTERM and SIGKILL when kill() is given no timeout.
DEFAULT_KILL_TIMEOUT = 5.0
#: Lines of output kept per process when the manager is given no limit.
DEFAULT_BUFFER_LINES = 10_000
#: How long to wait for the members of a killed group to disappear.
SETTLE_TIMEOUT = 5.0


def utc_now() -> datetime:
    return datetime.now(UTC)


class ProcessManager:
    """Runs processes for an agent's workspace and tells subscribers what they do.

    Every process is started in a session (and process group) of its own, so a kill
    reaches the children it started too. Each keeps its last ``buffer_lines`` lines of
    output. :attr:`events` publishes ``ProcessStarted``, batched ``ProcessOutput`` and
    ``ProcessExited``, in that order per process. ``base_env`` is the environment every
    process starts from (default: this process's), ``clock`` stamps start and end times.
    With ``reap_orphans`` this process adopts and reaps the orphaned children of its
    processes, so none is left as a zombie under an init that does not reap (PID 1 in
    many containers; see :mod:`viewfinder.tui.process_groups`). It makes the whole
    process a child subreaper, so it is off by default for library use; the
    environment and the TUI, which own their process, turn it on. Whatever the setting,
    every manager reaps the orphans of its own groups that reach this process, so
    managers with different settings in one process do not leave each other zombies.

    With ``die_with_parent`` (the default) every process gets SIGKILL from the kernel
    when the thread that started it ends (``PR_SET_PDEATHSIG``), so not even a SIGKILL of
    this process leaves them running: start them from a thread that lives as long as
    they should (the event loop's), or pass False.

    Use it on one event loop; ``async with ProcessManager() as processes:`` kills
    everything on exit.
    """

    def __init__(
        self,
        *,
        buffer_lines: int = DEFAULT_BUFFER_LINES,
        kill_timeout: float = DEFAULT_KILL_TIMEOUT,
        base_env: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] = utc_now,
        reap_orphans: bool = False,
        die_with_parent: bool = True,
    ) -> None:
        if buffer_lines < 1:
            raise ValueError(f"buffer_lines must be at least 1, not {buffer_lines}")
        if kill_timeout < 0:
            raise ValueError(f"kill_timeout must not be negative, not {kill_timeout}")
        self.buffer_lines = buffer_lines
        self.kill_timeout = kill_timeout
        self.base_env = dict(base_env) if base_env is not None else None
        self.clock = clock
        self.reap_orphans = reap_orphans
        self.die_with_parent = die_with_parent
        self.events = EventBus()
        self._processes: dict[str, ManagedProcess] = {}
        self._next_id = 1
        # Groups whose leader ended on its own; children it left may still run or await
        # reaping. Settled (killed and reaped) by kill_all() and close(). A group is
        # dropped as soon as a sweep finds it empty (every GROUP_SWEEP_INTERVAL s while
        # any is listed): from then on the kernel may give its number to another group,
        # which must never get our SIGKILL.
        self._unsettled: set[int] = set()
        self._sweep_handle: asyncio.TimerHandle | None = None

    # -- spawning -------------------------------------------------------------------

    async def spawn(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        process_id: str | None = None,
        capture_output: bool = True,
    ) -> ProcessInfo:
        """Start ``command`` with ``args``; return its info once it runs.

        ``env`` adds to (or overrides) the base environment. ``process_id`` names the
        process (default: the next free number). Without ``capture_output`` its output
        goes to ``/dev/null``. Raises :class:`CommandNotFoundError` when the program
        does not exist, :class:`SpawnError` for another reason not to start, and
        :class:`DuplicateProcessError` when a running process has ``process_id``.
        """
        if self.reap_orphans:
            process_groups.become_subreaper()
        self._sweep()
        environment = dict(self.base_env if self.base_env is not None else os.environ)
        environment.update(env or {})
        program = _resolve(command, environment.get("PATH", os.defpath), cwd)
        workdir = _check_cwd(cwd)
        process_id = self._claim_id(process_id)
        output = subprocess.PIPE if capture_output else subprocess.DEVNULL
        start = lifetime.popen_dying_with_parent if self.die_with_parent else subprocess.Popen
        try:
            popen = start(
                [program, *args],
                cwd=workdir,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                start_new_session=True,  # its own group: one killpg reaches its children
            )
        except PermissionError as exc:
            raise CommandNotFoundError(command, f"permission denied ({exc.strerror})") from exc
        except FileNotFoundError as exc:
            raise CommandNotFoundError(command, "not found") from exc
        except OSError as exc:
            raise SpawnError(f"cannot start {command!r}: {exc}") from exc
        started_at = self.clock()
        arguments = tuple(str(arg) for arg in args)
        self.events.publish(ProcessStarted(process_id, popen.pid, command, arguments, started_at))
        managed = ManagedProcess(
            process_id,
            popen,
            command=command,
            args=arguments,
            cwd=workdir,
            started_at=started_at,
            buffer_lines=self.buffer_lines,
            bus=self.events,
            clock=self.clock,
            on_exit=self._leader_ended,
        )
        self._processes[process_id] = managed
        return managed.info()

    def _claim_id(self, process_id: str | None) -> str:
        if process_id is None:
            while str(self._next_id) in self._processes:
                self._next_id += 1
            process_id = str(self._next_id)
            self._next_id += 1
            return process_id
        if not process_id or any(char.isspace() for char in process_id):
            raise ValueError(f"process id {process_id!r} must be non-empty and without spaces")
        existing = self._processes.get(process_id)
        if existing is not None and existing.running:
            raise DuplicateProcessError(process_id)
        return process_id

    # -- looking --------------------------------------------------------------------

    def _managed(self, process_id: str) -> ManagedProcess:
        try:
            return self._processes[process_id]
        except KeyError:
            raise UnknownProcessError(process_id, self._processes) from None

    def get(self, process_id: str) -> ProcessInfo:
        """The current info of one process; :class:`UnknownProcessError` for a bad id."""
        return self._managed(process_id).info()

    def list_processes(self) -> list[ProcessInfo]:
        """Every process spawned (running or not), oldest first."""
        return [managed.info() for managed in self._processes.values()]

    def logs(self, process_id: str, limit: int | None = None) -> list[OutputLine]:
        """The last ``limit`` buffered output lines of a process (all kept ones by default)."""
        return self._managed(process_id).buffer.tail(limit)

    def __contains__(self, process_id: object) -> bool:
        return process_id in self._processes

    def subscribe(self, max_events: int = DEFAULT_MAX_EVENTS) -> EventSubscription:
        """Shortcut for ``events.subscribe(max_events)``; see :class:`EventSubscription`."""
        return self.events.subscribe(max_events)

    async def wait(self, process_id: str, timeout: float | None = None) -> ProcessInfo:
        """Wait until the process ended (its ``ProcessExited`` is out); return its info."""
        managed = self._managed(process_id)
        async with asyncio.timeout(timeout):
            await managed.exited.wait()
        return managed.info()

    # -- killing --------------------------------------------------------------------

    async def kill(self, process_id: str, timeout: float | None = None) -> ProcessInfo:
        """End a process and every process in its group; return its final info.

        Sends SIGTERM, then SIGKILL after ``timeout`` seconds (default
        :attr:`kill_timeout`), then SIGKILL to whatever is left in the group (children
        that ignore SIGTERM). Returns once no member of the group is left.
        """
        managed = self._managed(process_id)
        wait = self.kill_timeout if timeout is None else timeout
        if not managed.watched and managed.running:
            return await self._kill_unwatched(managed, wait)
        if managed.running:
            managed.killed = True
            process_groups.signal_group(managed.pgid, signal.SIGTERM)
            try:
                await asyncio.wait_for(managed.ended.wait(), wait)
            except TimeoutError:
                log.info("process %s ignored SIGTERM for %gs; killing it", process_id, wait)
        await self._end_groups({managed.pgid})
        await managed.exited.wait()
        self._unsettled.discard(managed.pgid)
        return managed.info()

    async def _kill_unwatched(self, managed: ManagedProcess, wait: float) -> ProcessInfo:
        """Kill a process whose event loop is gone (an app that ran in its own loop)."""
        managed.killed = True
        process_groups.signal_group(managed.pgid, signal.SIGTERM)
        try:
            await asyncio.to_thread(managed.popen.wait, wait)
        except subprocess.TimeoutExpired:
            log.info("process %s ignored SIGTERM for %gs; killing it", managed.id, wait)
        await self._end_groups({managed.pgid})
        await asyncio.to_thread(managed.popen.wait)
        managed.end_unwatched()
        self._unsettled.discard(managed.pgid)
        return managed.info()

    async def kill_all(self, timeout: float | None = None) -> list[ProcessInfo]:
        """Kill every running process (in parallel) and what their groups left behind."""
        running = [managed.id for managed in self._processes.values() if managed.running]
        results = await asyncio.gather(*(self.kill(pid, timeout) for pid in running))
        # Groups whose leader ended on its own may still hold the children it left: those
        # listed (still occupied at the last sweep), and those of leaders that ended a
        # moment ago and are not listed yet. A group that emptied long ago is not ours.
        self._sweep()
        just_ended = {
            m.pgid for m in self._processes.values() if m.ended.is_set() and not m.exited.is_set()
        }
        await self._end_groups(self._unsettled | just_ended)
        self._unsettled.clear()
        return list(results)

    async def _end_groups(self, pgids: set[int]) -> None:
        """SIGKILL what is left of the groups ``pgids``; return once nothing of them is left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE_TIMEOUT
        me = os.getpid()
        while pgids:
            leaders = self._leaders()
            # Always, whatever reap_orphans says: another manager (or anything else in
            # this process) may have made it a subreaper, and then the orphans of our
            # groups are ours to reap, or they stay zombies we would wait for in vain.
            process_groups.reap_orphans(pgids, exclude=leaders)
            # One /proc scan for all groups. Zombies someone else must reap are harmless;
            # ours are reaped on the next round.
            left = [
                entry
                for entry in process_groups.processes()
                if entry.pgid in pgids
                and (not entry.zombie or (entry.ppid == me and entry.pid not in leaders))
            ]
            if not left:
                return
            for pgid in {entry.pgid for entry in left if not entry.zombie}:
                process_groups.signal_group(pgid, signal.SIGKILL)
            if loop.time() > deadline:
                log.warning("still left after SIGKILL: %s", sorted(entry.pid for entry in left))
                return
            await asyncio.sleep(0.01)

    def _leaders(self) -> set[int]:
        # Each ManagedProcess reaps its own leader and needs its exit status.
        return {managed.pid for managed in self._processes.values() if not managed.ended.is_set()}

    def _leader_ended(self, pgid: int) -> None:
        self._unsettled.add(pgid)
        self._schedule_sweep()

    def _schedule_sweep(self) -> None:
        if self._sweep_handle is not None or not self._unsettled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: the next spawn or kill_all sweeps
            return
        self._sweep_handle = loop.call_later(GROUP_SWEEP_INTERVAL, self._periodic_sweep)

    def _periodic_sweep(self) -> None:
        self._sweep_handle = None
        self._sweep()
        self._schedule_sweep()

    def _sweep(self) -> None:
        """Reap orphans of groups whose leader ended on its own; forget emptied groups."""
        if not self._unsettled:
            return
        process_groups.reap_orphans(self._unsettled, exclude=self._leaders())
        occupied = {entry.pgid for entry in process_groups.processes()}
        self._unsettled &= occupied

    # -- lifetime -------------------------------------------------------------------

    async def close(self, timeout: float | None = None) -> None:
        """Kill everything and end every event subscription."""
        await self.kill_all(timeout)
        if self._sweep_handle is not None:
            self._sweep_handle.cancel()
            self._sweep_handle = None
        self.events.close()

    async def __aenter__(self) -> ProcessManager:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        running = sum(1 for managed in self._processes.values() if managed.running)
        return f"ProcessManager({len(self._processes)} processes, {running} running)"


def _resolve(command: str, path: str, cwd: str | os.PathLike[str] | None) -> str:
    if not command or not command.strip():
        raise CommandNotFoundError(command, "the command is empty")
    if os.sep in command:
        candidate = Path(command)
        if not candidate.is_absolute() and cwd is not None:
            candidate = Path(cwd) / candidate
        if not candidate.is_file():
            raise CommandNotFoundError(command, "no such file")
        if not os.access(candidate, os.X_OK):
            raise CommandNotFoundError(command, "the file is not executable")
        return os.path.abspath(candidate)  # the child runs it from cwd
    found = shutil.which(command, path=path)
    if found is None:
        raise CommandNotFoundError(command)
    return found


def _check_cwd(cwd: str | os.PathLike[str] | None) -> str | None:
    if cwd is None:
        return None
    folder = Path(cwd)
    if not folder.is_dir():
        raise SpawnError(
            f"working directory {str(folder)!r} does not exist or is not a folder; "
            "create it or pass another cwd"
        )
    return str(folder)
