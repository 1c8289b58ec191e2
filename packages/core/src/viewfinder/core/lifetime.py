"""Child processes that do not outlive the process that started them.

``atexit`` handlers do not run when a process dies by SIGKILL, and a parent killed that
way cannot stop its children. On Linux the kernel can do it instead: a child that asked
for a *parent-death signal* (``prctl(PR_SET_PDEATHSIG)``) receives that signal as soon
as the thread that forked it exits. Pass :func:`die_with_parent` as ``preexec_fn`` to
:class:`subprocess.Popen` (it runs in the child between ``fork`` and ``exec``).

The signal is tied to the *thread* that forked the child, not to the process: start
long-lived children from a thread that lives as long as they should (the main thread,
or a dedicated spawner thread), never from a short-lived worker thread.

A ``preexec_fn`` makes :mod:`subprocess` use a plain ``fork``, whose child runs the
fork handlers of every library loaded; where other threads hold locks those handlers
need (gRPC's in a Ray actor), the child hangs before ``exec``, and ``Popen`` with it.
A child that is itself Python can instead call :func:`die_with` first thing after
``exec``, with the pid of the process that started it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1

# Looked up once in the parent: the child between fork and exec must not load libraries.
_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
    _prctl = _libc.prctl if _libc is not None else None
except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
    _libc, _prctl = None, None


def parent_death_signal_supported() -> bool:
    """True where :func:`die_with_parent` can ask the kernel for a parent-death signal."""
    return _prctl is not None


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child: ask to receive ``sig`` when the thread that forked it exits.

    Meant as ``Popen(..., preexec_fn=die_with_parent)``. Where the parent had already
    died before the request was made (a race the kernel cannot close), the child sends
    itself ``sig`` at once. Does nothing on systems without ``prctl``.
    """
    if _prctl is None:
        return
    parent = os.getppid()
    _prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent:  # re-parented already: the parent is gone
        os.kill(os.getpid(), sig)


def die_with(parent: int, sig: int = signal.SIGKILL) -> None:
    """In a Python child started without a ``preexec_fn``: ask to receive ``sig`` when
    the thread that started it exits. ``parent`` is the pid of the process that started
    it; if that is no longer its parent, the parent is gone already and the child sends
    itself ``sig`` at once. Does nothing on systems without ``prctl``.
    """
    if _prctl is None:
        return
    _prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)
