"""Children started with popen_dying_with_parent (or die_with_parent) end when
their parent is killed with SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from viewfinder.core import lifetime
from viewfinder.core.lifetime import parent_death_signal_supported, popen_dying_with_parent
from viewfinder.core.testing import wait_until

pytestmark = pytest.mark.skipif(
    not parent_death_signal_supported(), reason="prctl(PR_SET_PDEATHSIG) is Linux only"
)

PARENT = textwrap.dedent(
    """
    import os, subprocess, sys, time
    from viewfinder.core.lifetime import die_with_parent, popen_dying_with_parent
    kwargs = {"preexec_fn": die_with_parent} if sys.argv[1] == "yes" else {}
    command = ["sleep", "300"]
    start = popen_dying_with_parent if sys.argv[1] == "popen" else subprocess.Popen
    child = start(command, **kwargs)
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


@pytest.mark.parametrize("how", ["popen", "yes"], ids=["popen_dying_with_parent", "preexec_fn"])
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


def test_the_program_runs_as_asked_once_it_returns() -> None:
    # the same pid, argv and environment (no LC_CTYPE from Python's C-locale coercion),
    # and it runs already when the call returns: no launcher is left to see
    for env in ({"PATH": os.defpath, "ONLY": "this"}, {"PATH": os.defpath, "LC_CTYPE": "C"}):
        child = popen_dying_with_parent(["sleep", "30"], env=env)
        try:
            proc = Path(f"/proc/{child.pid}")
            assert (proc / "cmdline").read_bytes() == b"sleep\x0030\x00"
            environ = (proc / "environ").read_bytes().split(b"\x00")[:-1]
            assert sorted(environ) == sorted(f"{k}={v}".encode() for k, v in env.items())
        finally:
            child.kill()
            child.wait()
    shown = popen_dying_with_parent(
        ["sh", "-c", "echo $0; grep ^PPid /proc/$$/status"], stdout=subprocess.PIPE, text=True
    )
    output, _ = shown.communicate(timeout=30)
    assert output.split() == ["sh", "PPid:", str(os.getpid())]


def test_a_launcher_whose_parent_is_not_the_one_that_asked_ends_itself() -> None:
    # the parent died before the request took hold (here: another process started the
    # launcher): the child cannot be tied to it, so it ends
    # (its report pipe here is the relay's stderr, fd 2)
    command = lifetime._launcher_command(["sleep", "300"], "sleep", signal.SIGKILL, 2, None)
    relay = "import subprocess, sys; print(subprocess.run(sys.argv[1:]).returncode)"
    result = subprocess.run(
        [sys.executable, "-c", relay, *command], capture_output=True, text=True, timeout=30
    )
    assert result.stdout.strip() == str(-signal.SIGKILL), result.stderr


def test_no_fork_handler_runs_so_a_lock_held_at_the_fork_cannot_hang_the_child() -> None:
    program = textwrap.dedent(
        """
        import os, subprocess, sys, threading
        from viewfinder.core.lifetime import die_with_parent, popen_dying_with_parent
        held = threading.Lock()
        held.acquire()  # held for good, as by a thread busy at the moment of the fork
        os.register_at_fork(after_in_child=held.acquire)
        if sys.argv[1] == "popen":
            child = popen_dying_with_parent(["true"])
        else:
            child = subprocess.Popen(["true"], preexec_fn=die_with_parent)
        print(child.wait(timeout=20))
        """
    )
    started = subprocess.run(
        [sys.executable, "-c", program, "popen"], capture_output=True, text=True, timeout=60
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


def test_a_program_that_cannot_run_raises_as_popen_does(tmp_path: Path) -> None:
    starts_that_fail(tmp_path)


LEAKS = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from test_lifetime import open_pipes, starts_that_fail, zombie_children
    pipes, zombies = open_pipes(), zombie_children()
    starts_that_fail(Path(sys.argv[2]))
    print(sorted(open_pipes() - pipes), sorted(zombie_children() - zombies))
    """
)


def test_starts_that_fail_leave_no_pipe_and_no_unreaped_child(tmp_path: Path) -> None:
    # in a process of its own: a test worker's other children and threads come and go
    done = subprocess.run(
        [sys.executable, "-c", LEAKS, str(Path(__file__).parent), str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] []"


def open_pipes() -> set[str]:
    pipes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # closed while we looked
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("pipe:"):
                pipes.add(target)
    return pipes


def zombie_children() -> set[str]:
    zombies = set()
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid():
            zombies.add(entry.name)
    return zombies


def starts_that_fail(tmp_path: Path) -> None:
    """Each way a start can fail raises as Popen does; one that works runs."""
    with pytest.raises(FileNotFoundError, match="no-such-program"):
        popen_dying_with_parent(["no-such-program-here"])
    with pytest.raises(FileNotFoundError):
        popen_dying_with_parent(["./gone"], cwd=tmp_path)
    with pytest.raises(FileNotFoundError):  # the working folder
        popen_dying_with_parent(["true"], cwd=tmp_path / "missing")
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o644)
    with pytest.raises(PermissionError):
        popen_dying_with_parent(["./script"], cwd=tmp_path)
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF not really")
    garbage.chmod(0o755)
    with pytest.raises(OSError, match="Exec format error"):
        popen_dying_with_parent([str(garbage)])
    with pytest.raises(ValueError, match="empty command"):
        popen_dying_with_parent([])
    with pytest.raises(TypeError, match="preexec_fn"):
        popen_dying_with_parent(["true"], preexec_fn=os.getpid)
    script.chmod(0o755)
    ran = popen_dying_with_parent(["./script"], cwd=tmp_path, stdout=subprocess.PIPE)
    assert ran.communicate(timeout=30)[0] == b"ran\n"
    with_path = popen_dying_with_parent(["script"], env={"PATH": str(tmp_path)}, stdout=-1)
    assert with_path.communicate(timeout=30)[0] == b"ran\n"
