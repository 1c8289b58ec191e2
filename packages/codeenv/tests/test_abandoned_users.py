"""Session user ids that a dead server left behind are cleaned; held ones are not."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
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


def test_an_episode_home_kept_between_workers_is_not_taken_for_abandoned(
    tmp_path: Path,
) -> None:
    """Another server's reap (another SandboxUsers on the same lock folder) between two
    workers of one episode leaves the episode's home and its files."""
    from viewfinder.codeenv import CodeEnvConfig
    from viewfinder.codeenv.worker_process import WorkerProcess

    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    locks = tmp_path / "locks"
    ours = SandboxUsers(first=64100, count=2, lock_dir=locks)
    another_server = SandboxUsers(first=64100, count=2, lock_dir=locks)
    home = Path(tempfile.mkdtemp(prefix="viewfinder-test-episode-"))
    try:
        worker = WorkerProcess(CodeEnvConfig(), None, users=ours, home=home)
        try:
            uid = worker.uid
            assert uid is not None
            assert home.stat().st_uid == uid
            (home / "notes.txt").write_text("written by the episode")
            os.chown(home / "notes.txt", uid, uid)
        finally:
            worker.stop()
        assert another_server.reap_abandoned() == {}
        assert (home / "notes.txt").read_text() == "written by the episode"
        worker = WorkerProcess(CodeEnvConfig(), None, users=ours, home=home)
        try:
            assert worker.uid is not None
            assert (home / "notes.txt").stat().st_uid == worker.uid
        finally:
            worker.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)
