"""Child processes that do not outlive the process that started them.

``atexit`` handlers do not run when a process dies by SIGKILL, and a parent killed that
way cannot stop its children. On Linux the kernel can do it instead: a child that asked
for a *parent-death signal* (``prctl(PR_SET_PDEATHSIG)``) receives that signal as soon
as the thread that forked it exits. Start the child with :func:`popen_dying_with_parent`:
a small launcher asks for the signal, then ``exec``s the program, whose pid, arguments
and environment are the ones asked for.

The signal is tied to the *thread* that forked the child, not to the process: start
long-lived children from a thread that lives as long as they should (the main thread,
or a dedicated spawner thread), never from a short-lived worker thread.

:func:`die_with_parent`, passed as ``preexec_fn``, asks in the child between ``fork`` and
``exec``; it is kept for callers that need no more. But a ``preexec_fn`` makes
:mod:`subprocess` use a plain ``fork``, whose child runs the fork handlers of every
library loaded; where other threads hold locks those handlers need (gRPC's in a Ray
actor), the child hangs before ``exec``, and ``Popen`` with it. The launcher of
:func:`popen_dying_with_parent` asks after ``exec`` and needs no ``preexec_fn``.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

_PR_SET_PDEATHSIG = 1

# Looked up once in the parent: the child between fork and exec must not load libraries.
_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
    _prctl = _libc.prctl if _libc is not None else None
except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
    _libc, _prctl = None, None


# Run as `python -I -S -c LAUNCHER report parent sig lc_ctype program argv...`: it asks
# for the signal, checks that the parent that started it is still there, and becomes the
# program. `report` is a pipe that closes on exec, or gets the errno of a failed exec.
# Python sets LC_CTYPE when the locale is C (PEP 538); the program gets the value it had.
_LAUNCHER = """\
import ctypes, os, sys
report, parent, sig, lc_ctype, program, *argv = sys.argv[1:]
report = int(report)
os.set_inheritable(report, False)
ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)
if os.getppid() != int(parent):
    os.kill(os.getpid(), int(sig))
if lc_ctype:
    os.environ["LC_CTYPE"] = lc_ctype[1:]
else:
    os.environ.pop("LC_CTYPE", None)
try:
    os.execvp(program, argv)
except OSError as exc:
    os.write(report, str(exc.errno or 0).encode())
    os._exit(127)
"""


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


def popen_dying_with_parent(
    argv: Sequence[str],
    sig: int = signal.SIGKILL,
    *,
    executable: str | None = None,
    **options: Any,
) -> subprocess.Popen[Any]:
    """:class:`subprocess.Popen` of ``argv`` (``options`` are Popen's, without
    ``preexec_fn``), whose process receives ``sig`` when the thread that calls this exits.

    A small launcher asks for the signal after ``exec`` and then becomes the program
    (``executable``, or ``argv[0]`` looked up in the ``PATH`` of the child's environment),
    under the same pid, with ``argv`` and the environment unchanged. This returns once the
    program runs, and raises the :class:`OSError` of an ``exec`` that failed
    (:class:`FileNotFoundError`, :class:`PermissionError`, ...), as ``Popen`` does. Where
    the parent died before the launcher's request took hold, the launcher sends itself
    ``sig``. Without ``prctl`` (or an interpreter to run the launcher) it is a plain
    ``Popen``.
    """
    if options.get("preexec_fn") is not None:
        raise TypeError("popen_dying_with_parent takes no preexec_fn: that is what it avoids")
    words = [os.fspath(word) for word in argv]
    if not words:
        raise ValueError("an empty command: give at least the program")
    if _prctl is None or not sys.executable:
        return subprocess.Popen(words, executable=executable, **options)
    program = os.fspath(executable) if executable is not None else words[0]
    read_end, write_end = os.pipe()
    try:
        options["pass_fds"] = (*options.get("pass_fds", ()), write_end)
        command = _launcher_command(words, program, sig, write_end, options.get("env"))
        process = subprocess.Popen(command, **options)
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as report:
        failure = report.read()  # nothing: the program runs (or the launcher ended)
    if failure:
        process.wait()
        code = int(failure)
        raise OSError(code, os.strerror(code), program)
    return process


def _launcher_command(
    words: list[str], program: str, sig: int, report: int, env: Mapping[str, str] | None
) -> list[str]:
    lc_ctype = (os.environ if env is None else env).get("LC_CTYPE")
    return [
        sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report), str(os.getpid()),
        str(int(sig)), "" if lc_ctype is None else f"={lc_ctype}", program, *words,
    ]  # fmt: skip
