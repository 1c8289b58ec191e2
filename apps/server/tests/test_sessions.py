"""Sessions on the server: isolation, the idle reaper, hostile code, no leaks."""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx
import pytest

from viewfinder.codeenv import CodeEnvConfig
from viewfinder.codeenv.process_tree import living
from viewfinder.core.testing import wait_until
from viewfinder.server import CodingEnv, LocalServer, ServerConnectionError


def _active(server: LocalServer) -> int:
    count: int = httpx.get(f"{server.base_url}/health").json()["active_sessions"]
    return count


def test_idle_sessions_are_reaped_with_their_worker(serve: Callable[..., LocalServer]) -> None:
    server = serve(idle_timeout_s=0.5, reap_interval_s=0.1)
    env = CodingEnv(server.base_url)
    env.reset()
    uid = env.step("import os\nprint(os.getuid())").observation.metadata["sandbox_user"]
    wait_until(lambda: _active(server) == 0, "the idle session to be reaped")
    if uid is not None:
        assert living(uid=uid) == []
    with pytest.raises(ServerConnectionError, match=r"idle for over 0\.5 s"):
        env.step("print('too late')")
    env.close()


def test_a_long_step_is_not_reaped(serve: Callable[..., LocalServer]) -> None:
    server = serve(idle_timeout_s=0.5, reap_interval_s=0.1)
    with CodingEnv(server.base_url) as env:
        env.reset()
        result = env.step("import time\ntime.sleep(2)\nprint('done')")
        assert result.observation.stdout == "done\n"


def test_hostile_steps_never_take_the_server_down(serve: Callable[..., LocalServer]) -> None:
    server = serve(codeenv=CodeEnvConfig(timeout_s=3, memory_mb=1024, width=640, height=480))
    with CodingEnv(server.base_url) as env:
        env.reset()
        for code in (
            "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
            "import ctypes\nctypes.string_at(0)",
            "import os\nos._exit(1)",
            "while True: pass",
            "print('x' * (64 * 1024 * 1024))",
        ):
            env.step(code)
            assert httpx.get(f"{server.base_url}/health").json()["status"] == "healthy"
            assert env.step("print('alive')").observation.stdout == "alive\n"


def test_concurrent_sessions_on_one_server(serve: Callable[..., LocalServer]) -> None:
    server = serve(max_sessions=3)
    outputs: dict[int, str] = {}

    def session(number: int) -> None:
        with CodingEnv(server.base_url) as env:
            env.reset()
            env.step(f"mine = {number}")
            outputs[number] = env.step("print(mine)").observation.stdout

    threads = [threading.Thread(target=session, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outputs == {0: "0\n", 1: "1\n", 2: "2\n"}
    wait_until(lambda: _active(server) == 0, "every session to close")
