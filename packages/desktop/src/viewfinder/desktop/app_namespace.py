"""Apps in a PID namespace of their own, so nothing they start outlives them.

A process group is not enough: a daemon an app starts with ``setsid`` (a shell's
``nohup … &``, a D-Bus or settings daemon, a browser's helper) leaves the group and
survives ``killpg``. In a PID namespace it cannot leave: when the namespace's first
process ends, the kernel kills every process left in it. bubblewrap makes one without
privileges (``bwrap --unshare-pid``), with ``--die-with-parent`` tying it to the
process that started it, so a SIGKILL of that process ends the namespace too.

The app sees the whole file system and network as before (``--dev-bind / /``), and a
``/proc`` of its namespace. Where bubblewrap is missing or the kernel refuses
unprivileged namespaces, apps run in a process group only (:func:`namespace_prefix`
is None, and :func:`namespace_problem` says why).
"""

from __future__ import annotations

import functools
import shutil
import subprocess

#: The words that start a command in a PID namespace of its own, before ``--``.
BWRAP_OPTIONS = ("--unshare-pid", "--dev-bind", "/", "/", "--proc", "/proc")


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


def namespace_prefix(*, die_with_parent: bool = True) -> list[str] | None:
    """The words to put before an app's command to start it in a PID namespace of its
    own, or None where that is not possible (tried once per process). With
    ``die_with_parent`` the namespace ends when the process starting it ends, even by
    SIGKILL; without, it outlives it (``viewfinder desktop start``)."""
    prefix, _ = _probe()
    if prefix is None:
        return None
    return [prefix[0], "--die-with-parent", *prefix[1:]] if die_with_parent else list(prefix)


def namespace_problem() -> str:
    """Why apps run without a PID namespace here ("" where they run in one)."""
    return _probe()[1]
