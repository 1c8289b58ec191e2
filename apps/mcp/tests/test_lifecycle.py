"""``viewfinder mcp`` over stdio off the happy path: stopped by SIGTERM in the middle of a
call, and pointed at a display that is not running (yet)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from viewfinder.core.testing import processes_with_argument, running, wait_until
from viewfinder.mcp.testing import StdioServer, free_display_name, images_of, still_running, text_of

StartServer = Callable[..., StdioServer]


def test_sigterm_during_a_call_stops_its_code_and_leaves_nothing_running(
    stdio_server: StartServer,
) -> None:
    marker = f"{2000 + uuid.uuid4().int % 10**6 / 1000:.3f}"
    server = stdio_server("--size", "1002x702")
    busy = f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])\nwhile True:\n    pass\n"
    outcome: list[Any] = []

    def call() -> None:
        try:
            outcome.append(server.call("run_code", {"code": busy, "timeout": 200}))
        except Exception as exc:  # the server went away under the call
            outcome.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    wait_until(lambda: processes_with_argument(marker), "the call's code to run")
    started = server.processes()
    assert {"Xvfb", "bwrap"} & set(started.values())
    os.kill(server.pid, signal.SIGTERM)
    wait_until(lambda: not running(server.pid), "the server to exit")
    wait_until(lambda: not still_running(started), "what the server started to end", timeout=20)
    assert not processes_with_argument(marker)
    caller.join(30)
    assert outcome and (isinstance(outcome[0], Exception) or outcome[0].is_error)
    assert "stopped (signal SIGTERM)" in server.log()
    assert "Traceback" not in server.log()


def test_a_call_the_client_gives_up_on_is_cancelled_and_the_next_call_works(
    stdio_server: StartServer,
) -> None:
    marker = f"{2000 + uuid.uuid4().int % 10**6 / 1000:.3f}"
    server = stdio_server("--size", "1005x705")
    busy = f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'])\nwhile True:\n    pass\n"
    client = server.connection.client
    call = server.connection.portal.start_task_soon(
        lambda: client.call_tool("run_code", {"code": busy, "timeout": 200})
    )
    wait_until(lambda: processes_with_argument(marker), "the call's code to run")
    call.cancel()  # the client gives up on the call
    # the client told the server (notifications/cancelled): the code was stopped
    wait_until(lambda: not processes_with_argument(marker), "the cancelled code to stop")
    after = server.call("run_code", {"code": "print('next')"})
    assert not after.is_error and "next" in text_of(after)


@pytest.fixture
def free_display() -> str:
    """A display name no X server uses now."""
    return free_display_name(731)


def test_a_missing_display_is_a_tool_error_naming_it_and_once_it_runs_calls_work(
    stdio_server: StartServer, free_display: str
) -> None:
    server = stdio_server("--display", free_display)
    missing = server.call("screenshot")
    assert missing.is_error
    assert f"display {free_display} (--display) did not start" in text_of(missing)
    assert f"is an X server running on {free_display}?" in text_of(missing)
    assert server.call("run_code", {"code": "print(1)"}).is_error  # still no screen

    number = free_display.lstrip(":")
    xvfb = subprocess.Popen(
        ["Xvfb", free_display, "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: Path(f"/tmp/.X11-unix/X{number}").exists(), "the X server")
        result = server.call("screenshot")
        assert not result.is_error, text_of(result)
        # scaled for the model by default: within 1024x768 (XGA), keeping its shape
        assert images_of(result)[0].size == (1024, 640)
        assert "1600x1000 screen" in text_of(result)
        server.close()
        assert xvfb.poll() is None  # a display given by --display is left running
    finally:
        xvfb.terminate()
        xvfb.wait(10)
