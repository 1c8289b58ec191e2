"""``viewfinder serve`` ended by a signal: SIGTERM or SIGHUP cancels the running steps
and exits at once; a server started after a SIGKILLed one removes what that one left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import uuid
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from viewfinder.core.testing import child_processes, processes_with_argument, running, wait_until
from viewfinder.xvfb.reaping import reaping

Serve = Callable[..., tuple[subprocess.Popen[bytes], str]]


def busy_code(marker: str) -> str:
    return f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])\nwhile True:\n    pass\n"


def new_marker() -> str:
    return f"{2000 + uuid.uuid4().int % 10**6 / 1000:.3f}"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_cancels_running_steps_and_exits(
    serve_process: Serve, stop: signal.Signals
) -> None:
    ws_marker, http_marker = new_marker(), new_marker()
    process, base = serve_process("--max-sessions", "4")
    displays = child_processes("Xvfb", parent=process.pid)
    with connect(base.replace("http://", "ws://") + "/ws", max_size=None) as ws:
        ws.send(json.dumps({"type": "reset"}))
        ws.recv(timeout=60)
        ws.send(
            json.dumps({"type": "step", "data": {"code": busy_code(ws_marker), "timeout_s": 200}})
        )
        body = {"action": {"code": busy_code(http_marker)}, "timeout_s": 200}

        def post() -> None:
            with suppress(httpx.HTTPError):  # the server goes away under it
                httpx.post(f"{base}/step", json=body, timeout=120)

        http_step = threading.Thread(target=post, daemon=True)
        http_step.start()
        wait_until(
            lambda: processes_with_argument(ws_marker) and processes_with_argument(http_marker),
            "both steps to be running",
        )
        os.kill(process.pid, stop)
        code = process.wait(timeout=60)  # not 200 s: the steps were cancelled
        log = process.stderr.read().decode() if process.stderr else ""
        # the session was told why its socket closed
        with suppress(Exception):
            while True:
                ws.recv(timeout=5)
    assert code in (0, 128 + stop), log
    assert "Application shutdown complete" in log and "Traceback" not in log
    assert not processes_with_argument(ws_marker)
    assert not processes_with_argument(http_marker)
    assert displays and not any(running(pid) for pid in displays)
    http_step.join(30)


def test_a_server_started_after_a_sigkill_removes_what_the_killed_one_left(
    serve_process: Serve,
) -> None:
    marker = new_marker()
    tag = uuid.uuid4().hex[:12]
    code = (
        "import os, subprocess\n"
        f"subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"  # a daemon
        f"open('/tmp/left-{tag}', 'w').write('x')\n"
        f"open('/dev/shm/left-{tag}', 'w').write('x')\n"
        "print(os.environ['HOME'])\n"
    )
    killed, base = serve_process()
    displays = child_processes("Xvfb", parent=killed.pid)
    folders = [_fbdir(pid) for pid in displays]
    with connect(base.replace("http://", "ws://") + "/ws", max_size=None) as ws:
        ws.send(json.dumps({"type": "reset"}))
        ws.recv(timeout=60)
        ws.send(json.dumps({"type": "step", "data": {"code": code}}))
        observation = json.loads(ws.recv(timeout=60))["data"]["observation"]
        home = Path(observation["stdout"].strip())
        # what a SIGKILL leaves: the displays, the home and the display folders. Any
        # server or session actor that starts meanwhile (another test's, on another
        # worker) removes them, as the one started below does: held off until seen
        with reaping() as held:
            assert held
            killed.kill()
            killed.wait(30)
            left = [home, *folders]
            assert displays and all(running(pid) for pid in displays)
            assert all(path.exists() for path in left), [str(path) for path in left]
    # what the session wrote to /tmp and /dev/shm never reached the machine's: they
    # were its own private tmpfs (see the codeenv's isolation)
    assert not Path(f"/tmp/left-{tag}").exists() and not Path(f"/dev/shm/left-{tag}").exists()
    # the daemon went with the session's PID namespace, whose init died with the server
    wait_until(lambda: not processes_with_argument(marker), "the daemon to end", timeout=10)
    process, _ = serve_process()
    assert not any(running(pid) for pid in displays)
    assert not any(path.exists() for path in left), [str(p) for p in left if p.exists()]
    os.kill(process.pid, signal.SIGTERM)
    process.wait(60)


def _fbdir(pid: int) -> Path:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return Path(argv[argv.index(b"-fbdir") + 1].decode())
