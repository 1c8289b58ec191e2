"""Hostile code: each case is followed by a normal step that works."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from viewfinder.codeenv import EXIT_TIMEOUT, CodeAction, CodeEnvironment

HOSTILE = {
    "infinite loop": ("while True:\n    pass", "timeout"),
    "memory bomb": ("hog = bytearray(16 * 1024 ** 3)", "MemoryError"),
    "growing memory": (
        "hog = []\nwhile True:\n    hog.append(bytearray(32 * 1024 * 1024))",
        "MemoryError",
    ),
    "fork loop": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        "timeout",
    ),
    "segfault through ctypes": ("import ctypes\nctypes.string_at(0)", "SIGSEGV"),
    "os._exit": ("import os\nos._exit(7)", "exited with status 7"),
    "closing stdout": (
        "import os, sys\nsys.stdout.close()\nos.close(1)\nos.close(2)",
        "",
    ),
    "100 MB of output": (
        "import sys\nline = 'x' * 1023 + '\\n'\nfor _ in range(100 * 1024):\n"
        "    sys.stdout.write(line)",
        "",
    ),
    "deep recursion": ("def down(n):\n    return down(n + 1)\ndown(0)", "RecursionError"),
    "deep recursion past the C stack": (
        "import sys\nsys.setrecursionlimit(10 ** 7)\n"
        "import json\nnested = '[' * 10 ** 6 + ']' * 10 ** 6\njson.loads(nested)",
        "",
    ),
    "killing its parent": (
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
        "PermissionError",
    ),
    "escaping its process group": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(600)",
        "",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_code_is_contained_and_the_next_step_works(
    case: str, make_env: Callable[..., CodeEnvironment], worker_gone: Callable[..., None]
) -> None:
    # Without root there are no sandbox users, and "killing its parent" would kill pytest.
    assert os.geteuid() == 0, "the hostile-code tests need root, as CI has"
    code, expected = HOSTILE[case]
    # Only the cases meant to run into the timeout get a short one: on a loaded machine
    # filling a gigabyte can take longer than 4 s before MemoryError arrives.
    timeout_s = 4 if expected == "timeout" else 60
    env = make_env(timeout_s=timeout_s, memory_mb=1024, max_processes=32)
    env.step(CodeAction(code="before = 'set'"))
    worker = env.worker
    assert worker is not None
    before = (worker.pid, worker.uid, worker.home)

    obs = env.step(CodeAction(code=code))

    if expected == "timeout":
        assert obs.exit_code == EXIT_TIMEOUT
    if expected:
        assert expected in obs.stderr, obs.stderr[-2000:]
    assert len(obs.stdout) <= 2 * 1024 * 1024  # output stays bounded
    lost = "worker_lost" in obs.metadata
    if lost:
        # nothing of the old worker is left but the episode's home, kept for the next one
        worker_gone(before[0], before[1], None)
        assert before[2] is not None and before[2].exists()

    after = env.step(CodeAction(code="print('works', globals().get('before'))"))
    assert after.exit_code == 0, after.stderr
    assert after.stdout == ("works None\n" if lost else "works set\n")
    assert ("state_lost" in after.metadata) == lost
