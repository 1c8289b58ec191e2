"""Code that forks: no copy of the worker ever comes back to serve steps.

A child made by ``os.fork()`` runs the rest of the step's code too; when it gets to the
end it must exit there, or it would become a second worker reading the same command
pipe. Each case is followed by steps that see the episode's globals.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from viewfinder.codeenv import CodeAction, CodeEnvironment, process_tree
from viewfinder.core.testing import wait_until

END_MARKER = "viewfinder-end-of-step"

FORKS = {
    "fork with no exit in the child": (
        "import os\npid = os.fork()\nprint('child' if pid == 0 else 'parent', flush=True)\n"
        "if pid:\n    os.waitpid(pid, 0)\n",
        {"child", "parent"},
    ),
    "a child that raises": (
        "import os\npid = os.fork()\nif pid == 0:\n    raise ValueError('in the child')\n"
        "os.waitpid(pid, 0)\nprint('parent')\n",
        {"parent"},
    ),
    "a child that calls sys.exit": (
        "import os, sys\npid = os.fork()\nif pid == 0:\n    sys.exit(3)\n"
        "_, status = os.waitpid(pid, 0)\nprint('child exit', os.waitstatus_to_exitcode(status))\n",
        {"child exit 3"},
    ),
    "a fork loop up to OSError": (
        "import os\nforks = 0\nwhile True:\n    try:\n        os.fork()\n"
        "    except OSError:\n        break\n    forks += 1\n",
        set(),
    ),
    "multiprocessing with fork": (
        "import multiprocessing as mp\nwith mp.get_context('fork').Pool(2) as pool:\n"
        "    print(pool.map(abs, [-1, -2, -3]))\n",
        {"[1, 2, 3]"},
    ),
    "multiprocessing with spawn": (
        "import multiprocessing as mp\nwith mp.get_context('spawn').Pool(2) as pool:\n"
        "    print(pool.map(abs, [-1, -2, -3]))\n",
        {"[1, 2, 3]"},
    ),
}


def copies_of(pid: int, uid: int) -> list[int]:
    """Living processes of ``uid`` that run what process ``pid`` runs (its forks)."""
    command = Path(f"/proc/{pid}/cmdline").read_bytes()
    found = []
    for info in process_tree.living(uid=uid):
        try:
            if Path(f"/proc/{info.pid}/cmdline").read_bytes() == command:
                found.append(info.pid)
        except OSError:  # it ended while we looked
            continue
    return sorted(found)


@pytest.mark.parametrize("case", sorted(FORKS))
def test_a_forked_child_never_returns_into_the_worker(
    case: str, make_env: Callable[..., CodeEnvironment]
) -> None:
    code, lines = FORKS[case]
    env = make_env(timeout_s=60, max_processes=24)
    env.step(CodeAction(code="kept = 'the episode'"))
    worker = env.worker
    assert worker is not None

    obs = env.step(CodeAction(code=code))

    assert obs.exit_code == 0, obs.stderr[-2000:]
    assert set(obs.stdout.splitlines()) == lines
    assert END_MARKER not in obs.stdout + obs.stderr
    # every copy of the worker ends with the step: only the worker itself is left
    # (multiprocessing's resource tracker, a program of its own, may stay, as it would
    # beside any Python process that used spawn)
    wait_until(
        lambda: copies_of(worker.pid, worker.uid) == [worker.pid],
        "the forked children to end",
        timeout=20,
    )
    for _ in range(3):
        after = env.step(CodeAction(code="print(kept)"))
        assert after.exit_code == 0, after.stderr
        assert after.stdout == "the episode\n"
        assert "worker_lost" not in after.metadata


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("import sys\nsys.exit(-1)", 255),
        ("import sys\nsys.exit(256)", 0),
        ("raise SystemExit(3)", 3),
    ],
)
def test_exit_codes_are_what_python_c_gives(code: str, status: int, env: CodeEnvironment) -> None:
    assert env.step(CodeAction(code=code)).exit_code == status
