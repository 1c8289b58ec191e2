"""Apps in a PID namespace of their own, so nothing they start outlives them.

A process group is not enough: a daemon an app starts with ``setsid`` (a shell's
``nohup … &``, a D-Bus or settings daemon, a browser's helper) leaves the group and
survives ``killpg``. In a PID namespace it cannot leave: when the namespace's first
process ends, the kernel kills every process left in it. bubblewrap makes one without
privileges (``bwrap --unshare-pid``), with ``--die-with-parent`` tying it to the
process that started it, so a SIGKILL of that process ends the namespace too.

The namespace's first process is a small init of ours (:data:`INIT`), not the app: a
launcher that starts its app in the background and exits (``sh -c "app &"``, most
desktop launchers) must not take the app with it. The init starts the command, reaps
every process orphaned in the namespace, and ends when none is left, with the
command's exit status; SIGTERM, SIGINT or SIGHUP to it goes to every process of the
namespace (``kill(-1)`` there), daemons included.

``--die-with-parent`` leaves a gap: bubblewrap asks for it in its child after the
clone, so a holder killed in between leaves the namespace running. The init closes it:
it holds the read end of a pipe (a *lifeline*) whose only write end stays in the
holder; the kernel closes that when the holder dies, however it dies, and on the
end-of-file the init kills every process of the namespace and ends.

The app sees the whole file system and network as before (``--dev-bind / /``), and a
``/proc`` of its namespace. Where bubblewrap is missing or the kernel refuses
unprivileged namespaces, apps run in a process group only (:func:`namespace_prefix`
is None, and :func:`namespace_problem` says why).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from collections.abc import Mapping

#: The words that start a command in a PID namespace of its own, before ``--``.
BWRAP_OPTIONS = ("--unshare-pid", "--as-pid-1", "--dev-bind", "/", "/", "--proc", "/proc")

# Run as `python -I -S -c INIT lc_ctype lifeline program argv...` as the namespace's
# pid 1. Python sets LC_CTYPE when the locale is C (PEP 538); the program gets the value
# it had. lifeline: the fd of the pipe's read end, or "" for none.
INIT = """\
import os, signal, sys, threading
lc_ctype, lifeline, *argv = sys.argv[1:]
def forward(signum, frame):
    try:
        os.kill(-1, signum)
    except ProcessLookupError:
        pass
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, forward)
def watch(fd):
    while True:
        try:
            if not os.read(fd, 64):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    forward(signal.SIGKILL, None)
    os._exit(128 + signal.SIGKILL)
if lifeline:
    threading.Thread(target=watch, args=(int(lifeline),), daemon=True).start()
command = os.fork()
if command == 0:
    if lifeline:
        os.close(int(lifeline))
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    if lc_ctype:
        os.environ["LC_CTYPE"] = lc_ctype[1:]
    else:
        os.environ.pop("LC_CTYPE", None)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"cannot start {argv[0]}: {exc}", file=sys.stderr, flush=True)
        os._exit(127)
status = 0
while True:
    try:
        pid, code = os.wait()
    except ChildProcessError:
        break
    if pid == command:
        status = os.waitstatus_to_exitcode(code)
sys.exit(status if status >= 0 else 128 - status)
"""


@functools.cache
def _probe() -> tuple[list[str] | None, str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed; run `make setup`"
    try:
        done = subprocess.run(
            [bwrap, *BWRAP_OPTIONS, "--", "true"], capture_output=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bwrap does not run: {exc}"
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        return None, f"bwrap cannot make a PID namespace here: {reason}"
    return [bwrap, *BWRAP_OPTIONS, "--"], ""


def init_words(env: Mapping[str, str], lifeline: int | None = None) -> list[str]:
    """The words that run :data:`INIT` before a command run with environment ``env``,
    watching the pipe read end ``lifeline`` (an fd the command's process inherits)."""
    lc_ctype = env.get("LC_CTYPE")
    return [
        sys.executable, "-I", "-S", "-c", INIT,
        "" if lc_ctype is None else f"={lc_ctype}",
        "" if lifeline is None else str(lifeline),
    ]  # fmt: skip


def namespace_prefix(
    env: Mapping[str, str], *, die_with_parent: bool = True, lifeline: int | None = None
) -> list[str] | None:
    """The words to put before an app's command (run with environment ``env``) to start
    it in a PID namespace of its own, or None where that is not possible (tried once per
    process). With ``die_with_parent`` the namespace ends when the process starting it
    ends, even by SIGKILL, and also when the pipe whose read end is the inherited fd
    ``lifeline`` reaches its end; without, it outlives it (``viewfinder desktop start``)."""
    prefix, _ = _probe()
    if prefix is None:
        return None
    words = [prefix[0], "--die-with-parent", *prefix[1:]] if die_with_parent else list(prefix)
    return [*words, *init_words(env, lifeline if die_with_parent else None)]


def namespace_problem() -> str:
    """Why apps run without a PID namespace here ("" where they run in one)."""
    return _probe()[1]
