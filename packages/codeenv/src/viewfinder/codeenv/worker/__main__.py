"""The worker process: ``python -m viewfinder.codeenv.worker COMMAND_FD RESULT_FD``.

One worker serves one episode of one session. It reads a ``start`` frame (limits, the
display), confines itself, answers ``ready``, then runs ``run`` frames one at a time,
answering each with the captures it made (``capture`` frames, as they happen) and a
``done`` frame. After ``done`` it writes the step's end marker on stdout and stderr,
so the parent can tell which output belongs to which step.
"""

from __future__ import annotations

import faulthandler
import os
import select
import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from viewfinder.codeenv.worker import confinement, execution, protocol, toolkits
from viewfinder.codeenv.worker.recording import Recordings
from viewfinder.codeenv.worker.screen import Screen, ScreenConfig, preload


def _write_marker(fd: int, marker: bytes) -> bool:
    try:
        os.write(fd, marker)
        return True
    except OSError:
        return False


def _serve(command_fd: int, result_fd: int) -> int:
    start = protocol.read_frame(command_fd)
    if start is None or start.kind != "start":
        return 2
    config = start.header
    limits = confinement.Limits.from_header(config.get("limits", {}))
    # The worker's own descriptors go above the open-file limit the code gets: a daemon's
    # habit of closing every descriptor up to that limit then leaves the worker whole.
    high = _above_limit(limits.open_files)
    if high is not None:
        command_fd, result_fd = _move_high(command_fd, high), _move_high(result_fd, high + 1)
    execution.save_streams(high + 2 if high is not None else None)
    confined = confinement.confine(limits)
    toolkits.install()
    # A crash in C code (a segfault) then prints where the Python code was.
    faulthandler.enable(file=sys.stderr)

    sending = threading.Lock()  # the code may capture and record from several threads

    def send(header: dict[str, Any], payload: bytes) -> None:
        with sending:
            protocol.write_frame(result_fd, header, payload)

    screen = Screen(
        ScreenConfig(
            display=config.get("display"),
            framebuffer=config.get("framebuffer"),
            xvfb_pid=config.get("xvfb_pid"),
            xvfb_pidfd=config.get("xvfb_pidfd"),
            max_captures=int(config.get("max_captures", 64)),
        ),
        send,
    )
    recordings = Recordings(command_fd, send, screen)
    namespace = execution.new_namespace(
        {
            "capture_screenshot": screen.capture_screenshot,
            "attach_image": screen.attach_image,
            "start_recording": recordings.start_recording,
            "stop_recording": recordings.stop_recording,
        }
    )
    protocol.write_frame(result_fd, {"type": "ready", "pid": os.getpid(), **confined})
    # Only while idle: a step that is already waiting should not wait for this.
    poller = select.poll()  # select() cannot watch descriptors past 1023
    poller.register(command_fd, select.POLLIN)
    idle = not poller.poll(0)
    if config.get("preload") and screen.config.display is not None and idle:
        preload()

    while True:
        frame = protocol.read_frame(command_fd)
        if frame is None or frame.kind == "exit":
            return 0
        if frame.kind != "run":
            send({"type": "error", "message": f"unknown frame {frame.kind!r}"}, b"")
            continue
        recordings.step = int(frame.header["step"])
        _run_step(frame.header, namespace, screen, send)


def _run_step(header: dict[str, Any], namespace: dict[str, Any], screen: Screen, send: Any) -> None:
    step = int(header["step"])
    marker = str(header["marker"]).encode("ascii")
    screen.start_step(step)
    execution.restore_streams()
    started = time.perf_counter()
    exit_code = execution.run_code(str(header["code"]), step, namespace)
    elapsed = time.perf_counter() - started
    legacy_error = None
    if header.get("capture_after"):
        try:
            screen.capture_after_run()
        except Exception as exc:  # reported in the observation, never fatal
            legacy_error = f"{type(exc).__name__}: {exc}"
    execution.flush_streams()
    execution.restore_streams()
    send(
        {
            "type": "done",
            "step": step,
            "exit_code": exit_code,
            "captures": screen.count,
            "run_s": elapsed,
            "legacy_error": legacy_error,
            "markers": {
                "stdout": _write_marker(1, marker),
                "stderr": _write_marker(2, marker),
            },
        },
        b"",
    )


def main(argv: list[str]) -> int:
    command_fd, result_fd = int(argv[1]), int(argv[2])
    # Keep the protocol pipes out of the low numbers code tends to touch.
    command_fd, result_fd = (
        _move_high(command_fd, 1000),
        _move_high(result_fd, 1001),
    )
    try:
        return _serve(command_fd, result_fd)
    except (BrokenPipeError, protocol.ProtocolError):
        return 3  # the parent went away or spoke nonsense: nothing left to serve


def _above_limit(open_files: int | None) -> int | None:
    """A descriptor number above ``open_files`` the worker may still use, or None."""
    if open_files is None:
        return None
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = open_files + 8  # room for the protocol pipes and the saved streams
    if wanted + 4 > hard:
        return None
    if soft < wanted + 4:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted + 4, hard))
    return wanted


def _move_high(fd: int, target: int) -> int:
    moved = os.dup2(fd, target, inheritable=False)
    os.close(fd)
    return moved


if __name__ == "__main__":
    sys.exit(main(sys.argv))
