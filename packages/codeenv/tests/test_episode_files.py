"""Files: the episode's home outlives a worker restart; /tmp writes are the session's."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from viewfinder.codeenv import EXIT_TIMEOUT, CodeAction, CodeEnvironment


def test_files_in_the_home_survive_a_worker_restart(
    make_env: Callable[..., CodeEnvironment],
) -> None:
    env = make_env(timeout_s=3)
    env.step(CodeAction(code="open('notes.txt', 'w').write('kept')\nx = 1"))
    killed = env.step(CodeAction(code="while True:\n    pass"))
    assert killed.exit_code == EXIT_TIMEOUT
    after = env.step(CodeAction(code="print(open('notes.txt').read(), 'x' in globals())"))
    assert after.exit_code == 0, after.stderr
    assert after.stdout == "kept False\n"
    assert "files in the home are kept" in after.metadata["state_lost"]
    home = env.worker.home if env.worker is not None else None
    assert home is not None
    env.reset()  # a new episode: a new, empty home
    fresh = env.step(CodeAction(code="import os\nprint(os.listdir('.'))"))
    assert "notes.txt" not in fresh.stdout
    assert not home.exists()


def test_what_a_session_writes_to_tmp_is_private_and_goes_with_it(
    make_env: Callable[..., CodeEnvironment], tmp_path: Path
) -> None:
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    # without isolation (off, or refused by the kernel) /tmp is the machine's: what the
    # session writes there is still its own, and goes with it (with isolation, /tmp is
    # a private tmpfs: test_session_isolation.py)
    first = make_env(timeout_s=20, isolation=False)
    second = make_env(timeout_s=20, isolation=False)
    name = f"viewfinder-test-{os.getpid()}-{id(tmp_path)}"
    wrote = first.step(
        CodeAction(
            code=f"import os\nos.makedirs('/tmp/{name}-dir')\n"
            f"open('/tmp/{name}', 'w').write('secret')\n"
            f"open('/dev/shm/{name}', 'w').write('secret')\n"
            f"open('/tmp/.X11-unix/{name}', 'w').write('secret')\n"
        )
    )
    assert wrote.exit_code == 0, wrote.stderr
    for path in (f"/tmp/{name}", f"/dev/shm/{name}", f"/tmp/.X11-unix/{name}"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # readable by its session alone
    # (a session that keeps CAP_DAC_READ_SEARCH, given when the interpreter is not
    # readable by other users, can still read them: see docs/codeenv.md)
    second.step(CodeAction(code=f"open('/tmp/{name}-other', 'w').write('not yours')"))
    first.close()
    for path in (f"/tmp/{name}", f"/tmp/{name}-dir", f"/dev/shm/{name}", f"/tmp/.X11-unix/{name}"):
        assert not os.path.exists(path), path
    assert os.path.exists(f"/tmp/{name}-other")  # another session's: left alone
    second.close()
    assert not os.path.exists(f"/tmp/{name}-other")
