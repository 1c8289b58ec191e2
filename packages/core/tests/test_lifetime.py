"""Children started with die_with_parent end when their parent is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from viewfinder.core.lifetime import parent_death_signal_supported
from viewfinder.core.testing import wait_until

pytestmark = pytest.mark.skipif(
    not parent_death_signal_supported(), reason="prctl(PR_SET_PDEATHSIG) is Linux only"
)

PARENT = textwrap.dedent(
    """
    import os, subprocess, sys, time
    from viewfinder.core.lifetime import die_with_parent
    kwargs = {"preexec_fn": die_with_parent} if sys.argv[1] == "yes" else {}
    command = ["sleep", "300"]
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


@pytest.mark.parametrize("how", ["yes", "after-exec"], ids=["preexec_fn", "die_with"])
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
