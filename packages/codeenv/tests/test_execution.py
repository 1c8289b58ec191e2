"""Running code: persistent globals, exit codes, output, timeouts and fresh workers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from viewfinder.codeenv import EXIT_TIMEOUT, CodeAction, CodeEnvConfig, CodeEnvironment


def test_globals_persist_across_steps_and_reset_starts_clean(env: CodeEnvironment) -> None:
    assert env.step(CodeAction(code="import math\nx = 41")).exit_code == 0
    obs = env.step(CodeAction(code="print(x + 1, math.pi > 3)"))
    assert (obs.exit_code, obs.stdout) == (0, "42 True\n")
    assert env.state.step_count == 2
    first_episode = env.state.episode_id

    reset = env.reset()
    assert (reset.stdout, reset.stderr, reset.exit_code, reset.screenshots) == ("", "", 0, [])
    obs = env.step(CodeAction(code="print(x)"))
    assert obs.exit_code == 1
    assert "NameError: name 'x' is not defined" in obs.stderr
    assert env.state.episode_id != first_episode
    assert env.state.step_count == 1


def test_exit_codes_follow_python(env: CodeEnvironment) -> None:
    cases = {
        "pass": 0,
        "import sys\nsys.exit(3)": 3,
        "raise SystemExit": 0,
        "raise SystemExit('bye')": 1,
        "1 / 0": 1,
        "def broken(:": 1,
    }
    for code, expected in cases.items():
        assert env.step(CodeAction(code=code)).exit_code == expected, code
    assert env.state.last_exit_code == 1
    # sys.exit ends the step, not the worker
    assert env.step(CodeAction(code="print('still here')")).stdout == "still here\n"


def test_traceback_shows_the_code_and_not_the_worker(env: CodeEnvironment) -> None:
    obs = env.step(CodeAction(code="def f():\n    return {}['missing']\nf()"))
    assert obs.exit_code == 1
    assert obs.stderr.startswith("Traceback (most recent call last):\n")
    assert 'File "<step 1>", line 2, in f' in obs.stderr
    assert "return {}['missing']" in obs.stderr
    assert "KeyError: 'missing'" in obs.stderr
    assert "viewfinder" not in obs.stderr


def test_stdout_and_stderr_include_child_processes_and_c_level_writes(
    env: CodeEnvironment,
) -> None:
    code = (
        "import os, subprocess, sys\n"
        "print('from print')\n"
        "os.write(1, b'from fd 1\\n')\n"
        "print('to stderr', file=sys.stderr)\n"
        "subprocess.run([sys.executable, '-c', 'print(\"from a child\")'], check=True)\n"
    )
    obs = env.step(CodeAction(code=code))
    assert obs.exit_code == 0, obs.stderr
    assert obs.stdout == "from print\nfrom fd 1\nfrom a child\n"
    assert obs.stderr == "to stderr\n"


def test_timeout_kills_the_step_and_the_next_step_runs_in_a_fresh_worker(
    make_env: Callable[..., CodeEnvironment], worker_gone: Callable[..., None]
) -> None:
    env = make_env(timeout_s=20)
    env.step(CodeAction(code="state = 'kept'"))
    worker = env.worker
    assert worker is not None
    pid, uid, home = worker.pid, worker.uid, worker.home

    obs = env.step(
        CodeAction(
            code="import subprocess, time\nsubprocess.Popen(['sleep', '600'])\n"
            "print('looping', flush=True)\nwhile True: time.sleep(0.01)",
            timeout_s=1.5,
        )
    )
    assert obs.exit_code == EXIT_TIMEOUT
    assert obs.stdout == "looping\n"  # output before the timeout is kept
    assert "ran past its 1.5 s timeout" in obs.stderr
    assert "ran past its 1.5 s timeout" in obs.metadata["worker_lost"]
    worker_gone(pid, uid, None)  # the worker and its `sleep` child are gone
    assert home is not None and home.exists()  # the episode's home stays for the next one

    obs = env.step(CodeAction(code="print(globals().get('state'))"))
    assert (obs.exit_code, obs.stdout) == (0, "None\n")
    assert obs.metadata["worker_restarted"] is True
    assert "step 2: the step ran past its 1.5 s timeout" in obs.metadata["state_lost"]
    assert env.state.step_count == 3


def test_output_is_bounded_with_a_marker(make_env: Callable[..., CodeEnvironment]) -> None:
    env = make_env(output_limit_bytes=4096)
    obs = env.step(CodeAction(code="print('a' * 100_000)\nprint('the end')"))
    assert obs.exit_code == 0
    assert len(obs.stdout) < 4096 + 200
    assert obs.stdout.startswith("aaaa")
    assert obs.stdout.endswith("the end\n")
    assert "bytes of stdout left out: the step wrote 100009 bytes, the limit is 4096" in obs.stdout
    assert obs.metadata["output_truncated"]["stdout_bytes"] == 100_009


def test_output_of_processes_left_running_goes_to_the_next_step(env: CodeEnvironment) -> None:
    env.step(
        CodeAction(
            code="import subprocess\n"
            "p = subprocess.Popen(['sh', '-c', 'read x; echo late'],"
            " stdin=subprocess.PIPE)"
        )
    )
    obs = env.step(CodeAction(code="p.communicate(b'go\\n')"))
    assert obs.stdout == "late\n"


def test_code_runs_in_its_own_home_without_our_environment(env: CodeEnvironment) -> None:
    obs = env.step(
        CodeAction(
            code="import os\nprint(os.getcwd() == os.environ['HOME'])\n"
            "print(sorted(k for k in os.environ if 'TOKEN' in k))\n"
            "print(os.environ['DISPLAY'])"
        )
    )
    assert obs.stdout.splitlines() == ["True", "[]", env.display.name]  # type: ignore[union-attr]
    assert env.worker is not None and env.worker.home is not None
    assert Path(env.worker.home).is_dir()


def test_metadata_names_session_episode_and_step(env: CodeEnvironment) -> None:
    obs = env.step(CodeAction(code="pass"))
    assert obs.metadata["session_id"] == env.session_id
    assert obs.metadata["episode_id"] == env.state.episode_id
    assert obs.metadata["step"] == 1
    assert obs.metadata["duration_s"] >= 0


def test_a_step_asking_for_more_than_the_maximum_gets_the_maximum(
    make_env: Callable[..., CodeEnvironment],
) -> None:
    env = make_env(timeout_s=1, max_timeout_s=2)
    obs = env.step(CodeAction(code="while True:\n    pass", timeout_s=3600))
    assert obs.exit_code == EXIT_TIMEOUT
    assert "ran past its 2 s timeout" in obs.stderr
    assert "asked for 3600 s" in obs.metadata["timeout_clamped"]
    within = env.step(CodeAction(code="print('quick')", timeout_s=2))
    assert "timeout_clamped" not in within.metadata


def test_a_maximum_below_the_default_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match="max_timeout_s"):
        CodeEnvConfig(timeout_s=30, max_timeout_s=10)
