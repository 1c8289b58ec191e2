"""Session user ids that a dead server left behind are cleaned; held ones are not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from viewfinder.codeenv.sandbox_users import SandboxUsers
from viewfinder.core.testing import running, wait_until


def _as(uid: int) -> subprocess.Popen[bytes]:
    def become() -> None:
        os.setsid()
        os.setgid(uid)
        os.setuid(uid)

    return subprocess.Popen(["sleep", "300"], preexec_fn=become)


def test_abandoned_ids_are_cleaned_and_held_ones_left(tmp_path: Path) -> None:
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    users = SandboxUsers(first=64000, count=4, lock_dir=tmp_path / "locks")
    held = users.lease()  # a live session's id
    abandoned = held.uid + 1
    daemon, busy = _as(abandoned), _as(held.uid)
    left = Path(f"/tmp/viewfinder-test-abandoned-{os.getpid()}")
    left.write_text("left by a dead session")
    os.chown(left, abandoned, abandoned)
    try:
        cleaned = users.reap_abandoned()
        assert cleaned == {abandoned: 1}
        wait_until(lambda: daemon.poll() is not None, "the abandoned daemon to be killed")
        assert not left.exists()
        assert running(busy.pid)  # the held id's process is not touched
    finally:
        for process in (daemon, busy):
            process.kill()
            process.wait()
        left.unlink(missing_ok=True)
        held.release()
