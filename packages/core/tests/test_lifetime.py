"""Children started with parent_death_command (or die_with_parent, die_with) end when
their parent is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from viewfinder.core.lifetime import parent_death_command, parent_death_signal_supported
from viewfinder.core.testing import wait_until

pytestmark = pytest.mark.skipif(
    not parent_death_signal_supported(), reason="prctl(PR_SET_PDEATHSIG) is Linux only"
)

PARENT = textwrap.dedent(
    """
    import os, subprocess, sys, time
    from viewfinder.core.lifetime import die_with_parent, parent_death_command
    kwargs = {"preexec_fn": die_with_parent} if sys.argv[1] == "yes" else {}
    command = ["sleep", "300"]
    if sys.argv[1] == "command":
        command = parent_death_command(command)
    if sys.argv[1] == "after-exec":  # the child asks itself, no preexec_fn
        script = "import os, sys, time\\nfrom viewfinder.core.lifetime import die_with\\n"
        script += "die_with(int(sys.argv[1]))\\nprint(flush=True)\\ntime.sleep(300)\\n"
        command = [sys.executable, "-c", script, str(os.getpid())]
        kwargs = {"stdout": subprocess.PIPE}
    child = subprocess.Popen(command, **kwargs)
    if sys.argv[1] == "after-exec":
        child.stdout.readline()  # it has asked
    print(child.pid, flush=True)
    time.sleep(300)
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _start_parent(opt_in: str) -> tuple[subprocess.Popen[str], int]:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, opt_in], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    return parent, int(parent.stdout.readline())


@pytest.mark.parametrize(
    "how", ["command", "yes", "after-exec"], ids=["parent_death_command", "preexec_fn", "die_with"]
)
def test_a_child_dies_when_its_parent_is_killed(how: str) -> None:
    parent, child = _start_parent(how)
    assert _alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    wait_until(lambda: not _alive(child), "the child to die with its parent", timeout=10)


def test_without_it_the_child_outlives_the_parent() -> None:
    # The control: what die_with_parent prevents really happens without it.
    parent, child = _start_parent("no")
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _alive(child)
    finally:
        os.kill(child, signal.SIGKILL)


def test_the_command_runs_the_program_as_asked() -> None:
    # the same pid, argv and environment (no LC_CTYPE from Python's C-locale coercion)
    for env in ({"PATH": os.defpath, "ONLY": "this"}, {"PATH": os.defpath, "LC_CTYPE": "C"}):
        command = parent_death_command(["sleep", "30"], env=env)
        child = subprocess.Popen(command, env=env)
        try:
            proc = Path(f"/proc/{child.pid}")
            cmdline = proc / "cmdline"
            wait_until(lambda: cmdline.read_bytes() == b"sleep\x0030\x00", "exec")  # noqa: B023
            environ = (proc / "environ").read_bytes().split(b"\x00")[:-1]
            assert sorted(environ) == sorted(f"{k}={v}".encode() for k, v in env.items())
        finally:
            child.kill()
            child.wait()


def test_the_child_asks_for_the_signal_itself() -> None:
    status = subprocess.run(
        parent_death_command(["grep", "-h", "^PPid", "/proc/self/status"]),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert status.stdout.split() == ["PPid:", str(os.getpid())]
    # /proc has no field for the parent-death signal; a child of this test process that
    # this process outlives is not killed, one whose starter ended is (the tests above)


def test_a_child_started_by_another_process_than_the_one_that_made_the_command_dies() -> None:
    # the parent that made the command is gone (here: it is not the one starting it):
    # the launcher cannot tell a parent that died before its request, so it ends
    command = parent_death_command(["sleep", "300"])
    relay = "import subprocess, sys; print(subprocess.run(sys.argv[1:]).returncode)"
    result = subprocess.run(
        [sys.executable, "-c", relay, *command], capture_output=True, text=True, timeout=30
    )
    assert result.stdout.strip() == str(-signal.SIGKILL)


def test_no_fork_handler_runs_so_a_lock_held_at_the_fork_cannot_hang_the_child() -> None:
    program = textwrap.dedent(
        """
        import os, subprocess, sys, threading
        from viewfinder.core.lifetime import die_with_parent, parent_death_command
        held = threading.Lock()
        held.acquire()  # held for good, as by a thread busy at the moment of the fork
        os.register_at_fork(after_in_child=held.acquire)
        if sys.argv[1] == "command":
            child = subprocess.Popen(parent_death_command(["true"]))
        else:
            child = subprocess.Popen(["true"], preexec_fn=die_with_parent)
        print(child.wait(timeout=20))
        """
    )
    started = subprocess.run(
        [sys.executable, "-c", program, "command"], capture_output=True, text=True, timeout=60
    )
    assert started.stdout.strip() == "0", started.stderr
    # the control: with a preexec_fn the child runs the handler, never gets to exec, and
    # Popen waits for it
    hung = subprocess.Popen(
        [sys.executable, "-c", program, "preexec"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            hung.communicate(timeout=5)
    finally:
        os.killpg(hung.pid, signal.SIGKILL)  # the program and its stuck child
        hung.communicate()


def test_a_missing_or_unrunnable_program_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no-such-program"):
        parent_death_command(["no-such-program-here"])
    with pytest.raises(FileNotFoundError):
        parent_death_command(["./gone"], cwd=tmp_path)
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o644)
    with pytest.raises(PermissionError):
        parent_death_command(["./script"], cwd=tmp_path)
    with pytest.raises(PermissionError):
        parent_death_command(["script"], env={"PATH": str(tmp_path)})
    with pytest.raises(ValueError, match="empty command"):
        parent_death_command([])
    script.chmod(0o755)
    ran = subprocess.run(
        parent_death_command(["./script"], cwd=tmp_path), cwd=tmp_path, capture_output=True
    )
    assert ran.stdout == b"ran\n"
