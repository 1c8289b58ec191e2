"""Code that breaks its own process's plumbing fails its step; the worker goes on.

Each case is followed by a step that sees the episode's globals: the worker was not
lost (no restart, no ``state_lost``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from viewfinder.codeenv import CodeAction, CodeEnvironment

CASES = {
    "closing stderr, then an exception": (
        "import os\nos.close(2)\nraise ValueError('after closing stderr')",
        "ValueError: after closing stderr",
    ),
    "closing sys.stderr and stdout, then an exception": (
        "import os, sys\nsys.stderr.close()\nos.close(1)\nraise KeyError('closed')",
        "KeyError: 'closed'",
    ),
    "closing every descriptor above 2, as daemons do": (
        "import os\nos.closerange(3, os.sysconf('SC_OPEN_MAX'))\nraise ValueError('daemonised')",
        "ValueError: daemonised",
    ),
    "closing every descriptor up to the hard limit": (
        "import os, resource\nos.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[1])\n"
        "print('closed')",
        "",
    ),
    "10 MB of statements": ("y = 1\n" * 1_750_000, "MemoryError"),
    "code nested past the parser's limit": ("x = " + "(" * 300_000 + ")" * 300_000, "Error"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_worker_survives_its_own_code(
    case: str, make_env: Callable[..., CodeEnvironment]
) -> None:
    code, expected = CASES[case]
    env = make_env(timeout_s=60, memory_mb=1024)
    env.step(CodeAction(code="kept = 'the episode'"))
    worker = env.worker
    assert worker is not None
    pid = worker.pid

    obs = env.step(CodeAction(code=code))

    assert "worker_lost" not in obs.metadata, obs.stderr[-2000:]
    assert expected in obs.stderr
    after = env.step(CodeAction(code="print(kept)"))
    assert after.exit_code == 0, after.stderr
    assert after.stdout == "the episode\n"
    assert "state_lost" not in after.metadata
    assert env.worker is not None and env.worker.pid == pid
