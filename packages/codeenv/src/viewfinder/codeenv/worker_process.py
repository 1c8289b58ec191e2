"""The parent's side of one worker subprocess: start it, run steps in it, kill it.

The worker runs in a session and process group of its own, and (when we are root)
under a user id leased for it alone. A step is a ``run`` frame; the parent then waits
for the ``done`` frame, collecting ``capture`` frames and the stdout/stderr pipes
meanwhile, and kills the whole tree when the step's deadline passes. Whatever happens
to the worker (a segfault, ``os._exit``, a killed parent pipe) shows up here as an end
of file or an exit status: it is reported, never raised.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import stat
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewfinder.codeenv import frames, process_tree, session_cgroup, shared_tmp
from viewfinder.codeenv.config import EXIT_CANCELLED, EXIT_TIMEOUT, CodeEnvConfig, MiB
from viewfinder.codeenv.errors import WorkerStartError
from viewfinder.codeenv.font_cache import shared_font_cache
from viewfinder.codeenv.models import StoppedBy
from viewfinder.codeenv.output import OutputStream, StreamText
from viewfinder.codeenv.sandbox_users import SandboxUsers, UidLease, shared_users
from viewfinder.codeenv.session_space import SessionSpace, chown_tree
from viewfinder.codeenv.videos import StepVideos
from viewfinder.codeenv.worker import isolation, protocol
from viewfinder.core.errors import DisplayGoneError
from viewfinder.core.screenshot import Screenshot
from viewfinder.xvfb import Display
from viewfinder.xvfb.video import VideoInfo

#: After ``done``, how long to wait for the end markers on stdout and stderr.
_MARKER_WAIT_S = 2.0
#: After the worker died, how long to read what is left in its pipes.
_DRAIN_WAIT_S = 1.0

# Workers are started from this one long-lived thread: a worker's parent-death signal
# fires when the *thread* that started it ends, and this thread lives as long as we do.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="viewfinder-worker-spawner")


@dataclass
class Capture:
    """One ``capture_screenshot()`` (or after-run capture) received from the worker."""

    screenshot: Screenshot
    step: int
    index: int
    legacy: bool
    window: int | None

    @property
    def b64_size(self) -> int:
        """Characters the capture takes as base64 (what it costs in an observation)."""
        return (len(self.screenshot.data) + 2) // 3 * 4


@dataclass
class StepRun:
    """What one step did, as the parent saw it."""

    exit_code: int
    stdout: StreamText
    stderr: StreamText
    captures: list[Capture] = field(default_factory=list)
    #: Indices of captures left out as they came, the older ones past the budget.
    dropped: list[int] = field(default_factory=list)
    duration_s: float = 0.0
    #: Why the worker ended during this step (timeout, crash); None when it lives on.
    worker_lost: str | None = None
    timed_out: bool = False
    #: Why the step was cancelled (:meth:`WorkerProcess.cancel`), or None.
    cancelled: str | None = None
    legacy_error: str | None = None
    #: Videos of ``start_recording()``, each with who stopped it (see models.Video).
    videos: list[tuple[VideoInfo, StoppedBy]] = field(default_factory=list)
    video_errors: list[str] = field(default_factory=list)


def interpreter_world_readable() -> bool:
    """Whether a user without privileges can run this Python and import viewfinder."""
    import viewfinder.codeenv

    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(viewfinder.codeenv.__file__).parent}
    for path in paths:
        for directory in (path, *path.parents):
            try:
                mode = directory.stat().st_mode
            except OSError:
                return False
            if not mode & stat.S_IXOTH:
                return False
    return True


class WorkerProcess:
    """One worker subprocess; see the module docstring. Not thread-safe: one step at a time."""

    def __init__(
        self,
        config: CodeEnvConfig,
        display: Display | None,
        *,
        on_capture: Callable[[Capture], None] | None = None,
        users: SandboxUsers | None = None,
        home: Path | None = None,
        space: SessionSpace | None = None,
        video_dir: Callable[[], Path] | None = None,
    ) -> None:
        self.config = config
        #: The places the session writes (see session_space.py): the caller's (kept
        #: when the worker stops, its home across workers), or one of its own.
        self._given_space = space
        self._space: SessionSpace | None = None
        self._cgroup: session_cgroup.SessionCgroup | None = None
        #: Gives the folder ``start_recording()`` videos go to (made on first use).
        self._video_dir = video_dir
        #: A home the caller owns (kept when the worker stops), or None for one of its own.
        self._given_home = home
        self.display = display
        self._on_capture = on_capture
        self._lease: UidLease | None = None
        self._home: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._command_fd = -1
        self._result_fd = -1
        self._decoder = protocol.FrameDecoder()
        self.ready_info: dict[str, Any] = {}
        self._out = OutputStream("stdout", config.output_limit_bytes)
        self._err = OutputStream("stderr", config.output_limit_bytes)
        self._token = secrets.token_hex(8)
        self._lost: str | None = None
        self._cancelled: str | None = None
        self._isolation: dict[str, Any] | None = None
        #: The worker's own pid when bubblewrap stands between it and us.
        self._worker_pid: int | None = None
        try:
            self._start(users)
        except BaseException:
            self.stop()
            raise

    # -- facts --------------------------------------------------------------------------

    @property
    def sandboxed(self) -> bool:
        """True when the worker runs inside bubblewrap (see worker/isolation.py)."""
        return self._isolation is not None and "error" not in self._isolation

    @property
    def pid(self) -> int | None:
        """The worker's process id (inside bubblewrap, the worker's, not bwrap's)."""
        if self._worker_pid is not None:
            return self._worker_pid
        return self._process.pid if self._process is not None else None

    @property
    def uid(self) -> int | None:
        """The sandbox user id the worker runs under, or None when it runs as we do."""
        return self._lease.uid if self._lease is not None else None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._lost is None and self._process.poll() is None

    @property
    def home(self) -> Path | None:
        """The worker's home and working directory (removed when it stops)."""
        return self._home

    def processes(self) -> list[process_tree.ProcessInfo]:
        """The worker's processes still running (by user id, else by session)."""
        if self._process is None:
            return []
        if self.uid is not None:
            return process_tree.living(uid=self.uid)
        return process_tree.living(session=self._process.pid)

    def memory_bytes(self) -> int:
        """Resident memory of the worker and every process it started."""
        total = 0
        for info in self.processes():
            with contextlib.suppress(OSError, ValueError):
                for line in Path(f"/proc/{info.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        return total

    # -- starting -------------------------------------------------------------------------

    def _use_sandbox_user(self) -> bool:
        wanted = self.config.sandbox_user
        if wanted == "auto":
            return os.geteuid() == 0
        if wanted and os.geteuid() != 0:
            raise WorkerStartError(
                "sandbox_user=True needs root (a worker can only switch to another user "
                "id when started by root); run as root or use sandbox_user='auto'"
            )
        return bool(wanted)

    def _start(self, users: SandboxUsers | None) -> None:
        if self._use_sandbox_user():
            self._lease = (users or shared_users()).lease()
        self._space = self._given_space or SessionSpace(self.config.tmp_size_mb * MiB)
        self._home = self._given_home or self._space.home
        if self._lease is not None:
            self._space.give_to(self._lease.uid)
            chown_tree(self._home, self._lease.uid)
            # memory and processes of the session as a whole, where the host allows
            self._cgroup = session_cgroup.create(
                self.config.memory_mb * MiB, self.config.max_processes
            )
            if self.display is not None:
                # this session's user id, and no other session's, may use the display
                self.display.admit(self._lease.uid)
        shared_font_cache().seed(self._home, self.uid)
        command_r, self._command_fd = os.pipe()
        self._result_fd, result_w = os.pipe()
        inherited = [command_r, result_w]
        framebuffer_fd = None
        if self.display is not None and self.display.framebuffer_path is not None:
            # Passed open: the file is readable by anyone, its directory only by root.
            framebuffer_fd = os.open(self.display.framebuffer_path, os.O_RDONLY)
            inherited.append(framebuffer_fd)
        xvfb_fd = None
        if self.display is not None and self.display.pid is not None:
            # A handle on the X server that tells the worker when it exits, which an
            # isolated worker cannot see in /proc.
            with contextlib.suppress(OSError, AttributeError):
                xvfb_fd = os.pidfd_open(self.display.pid)
                inherited.append(xvfb_fd)
        argv = [sys.executable, "-m", "viewfinder.codeenv.worker", str(command_r), str(result_w)]
        argv = self._isolated(argv)
        if self._cgroup is not None:
            argv = [*self._cgroup.prefix(), *argv]
        try:
            self._process = _spawner.submit(
                subprocess.Popen,
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=inherited,
                env=self._environment(),
                cwd=self._home,
                start_new_session=True,
            ).result()
        finally:
            for fd in inherited:
                os.close(fd)
        assert self._process.stdout is not None and self._process.stderr is not None
        for stream in (self._process.stdout, self._process.stderr):
            os.set_blocking(stream.fileno(), False)
        limits = {
            "memory_bytes": self.config.memory_mb * MiB,
            "max_processes": self.config.max_processes,
            "file_size_bytes": self.config.file_size_mb * MiB,
            "open_files": self.config.open_files,
            "uid": self.uid,
            "keep_read_access": self.uid is not None and not interpreter_world_readable(),
            "isolation": self._isolation,
        }
        start = {
            "type": "start",
            "limits": limits,
            "display": self.display.name if self.display is not None else None,
            "framebuffer": f"/proc/self/fd/{framebuffer_fd}"
            if framebuffer_fd is not None
            else None,
            "xvfb_pid": self.display.pid if self.display is not None else None,
            "xvfb_pidfd": xvfb_fd,
            "max_captures": self.config.max_captures,
            "preload": self.config.preload_capture,
        }
        try:
            protocol.write_frame(self._command_fd, start)
        except BrokenPipeError as exc:
            raise WorkerStartError(self._start_failure("it exited at once")) from exc
        ready = self._wait_frame("ready", time.monotonic() + self.config.start_timeout_s)
        if ready is None:
            raise WorkerStartError(self._start_failure("it did not get ready"))
        self.ready_info = ready.header
        if self.sandboxed:
            self._worker_pid = self._find_worker_pid()

    def _isolated(self, argv: list[str]) -> list[str]:
        """``argv`` started inside bubblewrap (see worker/isolation.py) when the settings
        ask for isolation and this worker has a user of its own; as it is otherwise."""
        self._isolation = None
        if not self.config.isolation or self.uid is None:
            return argv  # only a worker started as root, for a user of its own, can be
        number = self.display.number if self.display is not None else None
        space = self._space
        assert space is not None
        plan = {
            "keep": [str(self._home)] if self._home is not None else [],
            "display_socket": f"/tmp/.X11-unix/X{number}" if number is not None else None,
            "tops": {top: str(folder) for top, folder in space.tops().items()},
            "tmp_bytes": self.config.tmp_size_mb * MiB,
            "network": self.config.session_network,
        }
        try:
            words, self._isolation = isolation.command(plan)
        except isolation.IsolationError as exc:
            if self.config.require_isolation:
                raise WorkerStartError(f"the session cannot be isolated: {exc}") from exc
            self._isolation = {"error": str(exc)}
            return argv
        # what holds for the session as a whole (docs/codeenv.md, "Limits")
        self._isolation["session_disk_bytes"] = space.size_bytes if space.capped else None
        self._isolation["session_disk_problem"] = space.problem
        cgroup = self._cgroup
        self._isolation["session_memory_bytes"] = (
            self.config.memory_mb * MiB if cgroup is not None else None
        )
        self._isolation["session_cgroup_problem"] = (
            None if cgroup is not None else session_cgroup.probe() or "it could not be made"
        )
        return [*words, *argv]

    def _find_worker_pid(self) -> int | None:
        """The pid (as we see it) of the worker bubblewrap started: the one process of
        the session's user id, which has run no code yet."""
        found = [info.pid for info in process_tree.living(uid=self.uid)]
        return found[0] if len(found) == 1 else None

    def _environment(self) -> dict[str, str]:
        # Built from scratch: nothing of ours (a server token, ...) reaches the code.
        assert self._home is not None
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": str(self._home),
            "TMPDIR": str(self._home),
            "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "MPLCONFIGDIR": str(self._home / ".matplotlib"),
            "SDL_VIDEODRIVER": "x11",
            "SDL_AUDIODRIVER": "dummy",
            "PYGAME_HIDE_SUPPORT_PROMPT": "1",
        }
        if self.display is not None:
            env["DISPLAY"] = self.display.name
        return env

    def _start_failure(self, what: str) -> str:
        stderr = b""
        if self._process is not None:
            with contextlib.suppress(OSError):
                self._process.wait(timeout=2)
            assert self._process.stderr is not None
            with contextlib.suppress(OSError, TypeError):
                stderr = self._process.stderr.read() or b""
        detail = stderr.decode("utf-8", "replace").strip()[-2000:]
        return f"the code env worker failed to start: {what}" + (
            f"; it said:\n{detail}" if detail else ""
        )

    def _wait_frame(self, kind: str, deadline: float) -> protocol.Frame | None:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._result_fd], [], [], remaining)
            if not ready:
                return None
            data = os.read(self._result_fd, 1 << 16)
            if not data:
                return None
            for frame in self._decoder.feed(data):
                if frame.kind == kind:
                    return frame

    # -- steps ----------------------------------------------------------------------------

    def run(
        self, code: str, step: int, timeout_s: float, *, capture_after: bool = False
    ) -> StepRun:
        """Run ``code`` as step ``step``; kill the worker if it takes over ``timeout_s``."""
        if not self.alive:
            raise WorkerStartError("the worker is not running; start a new one")
        marker = f"\0viewfinder-end-of-step-{step}-{self._token}\0"
        self._out.begin(marker.encode("ascii"))
        self._err.begin(marker.encode("ascii"))
        started = time.monotonic()
        deadline = started + timeout_s
        captures: deque[Capture] = deque()
        dropped: list[int] = []
        # base64 bytes of the captures kept: past the observation's budget the oldest go
        # at once, so a step capturing without end holds one budget's worth, not more
        held = 0
        done: dict[str, Any] | None = None
        lost: str | None = None
        timed_out = False
        videos = StepVideos(self.display, self._video_dir, step, limit=self.config.max_recordings)
        try:
            protocol.write_frame(
                self._command_fd,
                {
                    "type": "run",
                    "step": step,
                    "code": code,
                    "marker": marker,
                    "capture_after": capture_after,
                },
            )
        except OSError:
            lost = "the worker had exited before the step started"
        result_open = lost is None
        done_at = 0.0
        try:
            while lost is None:
                now = time.monotonic()
                if done is not None:
                    if self._markers_complete(done) or now - done_at > _MARKER_WAIT_S:
                        break
                    wait = done_at + _MARKER_WAIT_S - now
                elif now >= deadline:
                    timed_out = True
                    lost = f"the step ran past its {timeout_s:g} s timeout and was killed"
                    break
                else:
                    wait = deadline - now
                fds = [fd for fd in self._stream_fds() if fd >= 0]
                if result_open:
                    fds.append(self._result_fd)
                ready, _, _ = select.select(fds, [], [], max(wait, 0))
                for fd in ready:
                    if fd == self._result_fd:
                        data = os.read(fd, 1 << 20)
                        if not data:
                            result_open = False
                            if done is None:
                                lost = (
                                    f"the step was cancelled ({self._cancelled})"
                                    if self._cancelled is not None
                                    else self._exit_description()
                                )
                            continue
                        try:
                            for frame in self._decoder.feed(data):
                                if frame.kind == "capture":
                                    capture = self._receive_capture(frame)
                                    captures.append(capture)
                                    held += capture.b64_size
                                    while (
                                        held > self.config.observation_bytes and len(captures) > 1
                                    ):
                                        oldest = captures.popleft()
                                        held -= oldest.b64_size
                                        dropped.append(oldest.index)
                                elif frame.kind == "done":
                                    done, done_at = frames.done(frame.header), time.monotonic()
                                elif frame.kind == "video":
                                    self._answer(videos.handle(frame.header))
                        except protocol.ProtocolError as exc:
                            lost = f"the worker broke the result protocol ({exc}); it was stopped"
                        except frames.MalformedFrameError as exc:
                            lost = str(exc)
                    else:
                        self._read_stream(fd)
        finally:
            # nothing the step started records on: a video the code left running ends
            # here, on every way out of the step (an error included)
            videos.finish("step end" if lost is None else "worker lost")
        if lost is not None:
            self._lost = lost
            self._kill()
            self._drain()
            self._release()  # nothing of a lost worker outlives its step
            if timed_out:
                exit_code = EXIT_TIMEOUT
            elif self._cancelled is not None:
                exit_code = EXIT_CANCELLED
            else:
                exit_code = self._exit_code()
        else:
            assert done is not None
            exit_code = int(done["exit_code"])
        return StepRun(
            exit_code=exit_code,
            stdout=self._out.result(),
            stderr=self._err.result(),
            captures=list(captures),
            dropped=dropped,
            duration_s=time.monotonic() - started,
            worker_lost=lost,
            timed_out=timed_out,
            cancelled=self._cancelled if lost is not None else None,
            legacy_error=(done or {}).get("legacy_error"),
            videos=videos.finished,
            video_errors=videos.errors,
        )

    def _answer(self, reply: dict[str, Any]) -> None:
        """Send the worker the answer it waits for (it may be gone: then no one waits)."""
        with contextlib.suppress(OSError):
            protocol.write_frame(self._command_fd, reply)

    def _stream_fds(self) -> list[int]:
        assert self._process is not None
        fds = []
        for stream, collector in (
            (self._process.stdout, self._out),
            (self._process.stderr, self._err),
        ):
            fds.append(-1 if stream is None or collector.closed else stream.fileno())
        return fds

    def _read_stream(self, fd: int) -> None:
        assert self._process is not None and self._process.stdout is not None
        collector = self._out if fd == self._process.stdout.fileno() else self._err
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not data:
            collector.closed = True
        else:
            collector.feed(data)

    def _markers_complete(self, done: dict[str, Any]) -> bool:
        written = done.get("markers", {})
        return all(
            collector.marker_seen or collector.closed or not written.get(collector.name)
            for collector in (self._out, self._err)
        )

    def _receive_capture(self, frame: protocol.Frame) -> Capture:
        capture = Capture(**frames.capture(frame))  # checked whole, nothing decoded
        if self._on_capture is not None:
            self._on_capture(capture)
        return capture

    def _exit_description(self) -> str:
        code = self._exit_code(wait=2.0)
        if code < 0:
            import signal

            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker process was killed by {name}"
        return f"the worker process exited with status {code}"

    def _exit_code(self, wait: float = 2.0) -> int:
        assert self._process is not None
        try:
            code = self._process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return -9
        if self.sandboxed and code > 128:
            return 128 - code  # bubblewrap says 128 + N for a worker killed by signal N
        return code

    def _drain(self) -> None:
        """Read what the dead worker's pipes still hold (its tree is killed already)."""
        end = time.monotonic() + _DRAIN_WAIT_S
        while time.monotonic() < end:
            fds = [fd for fd in self._stream_fds() if fd >= 0]
            if not fds:
                return
            ready, _, _ = select.select(fds, [], [], max(end - time.monotonic(), 0))
            if not ready:
                return
            for fd in ready:
                self._read_stream(fd)

    # -- stopping -------------------------------------------------------------------------

    def cancel(self, reason: str) -> None:
        """Stop the running step now, from another thread: its processes are killed and
        it returns with exit code 130 and ``cancelled`` set to ``reason``."""
        self._cancelled = reason
        self.interrupt()

    def interrupt(self) -> None:
        """Kill the worker's processes now; safe from another thread while a step runs.

        The running step then returns with the worker reported lost.
        """
        if self._process is not None and self._process.poll() is None:
            process_tree.kill_all(
                group=self._process.pid,
                uid=self.uid,
                session=self._process.pid if self.uid is None else None,
            )

    def _kill(self) -> list[int]:
        if self._process is None:
            return []
        # Once the worker is reaped its pid may be reused: then sweep by user id only.
        running = self._process.returncode is None
        left = process_tree.kill_all(
            group=self._process.pid if running else None,
            uid=self.uid,
            session=self._process.pid if running and self.uid is None else None,
        )
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=5)
        return left

    def stop(self) -> None:
        """Kill the worker and everything it started; free its user id and home (idempotent)."""
        self._kill()
        self._release()
        if self._lost is None:
            self._lost = "stopped"

    def _release(self) -> None:
        """Close the pipes, give back the user id and remove the home of a killed worker."""
        left = self.processes() if self.uid is not None else []
        if self._process is not None:
            for stream in (self._process.stdout, self._process.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        self._out.closed = self._err.closed = True
        for fd in (self._command_fd, self._result_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._command_fd = self._result_fd = -1
        lease, display = self._lease, self.display
        if lease is not None and display is not None and display.guest == lease.uid:
            # the session is gone: its id may no longer use the display
            with contextlib.suppress(DisplayGoneError, OSError):
                display.admit(None)
        cgroup, self._cgroup = self._cgroup, None
        if cgroup is not None:
            cgroup.remove()
        if self._lease is not None and not left:
            # What the code wrote to the machine-wide temporary folders is the session's:
            # it goes with the session, before the id is handed to another one.
            kept = (self._given_home,) if self._given_home is not None else ()
            shared_tmp.remove_owned_by(self._lease.uid, keep=kept)
            if self._given_home is not None:
                # A kept home owned by a released id looks abandoned to another server's
                # reap_abandoned, which would remove it between two workers of a live
                # episode: it is root's until the next worker's id takes it over.
                with contextlib.suppress(OSError):
                    chown_tree(self._given_home, os.geteuid())
            if self._given_space is not None:
                self._given_space.take_back()  # its home is kept for the next worker
            # An id with processes left is not handed out again: lease() skips busy ids.
            self._lease.release()
        self._lease = None if not left else self._lease
        space, self._space = self._space, None
        if space is not None and space is not self._given_space:
            space.remove()  # the home and /tmp of the worker, with their tmpfs
        self._home = None
