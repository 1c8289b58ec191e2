"""Child processes that do not outlive the process that started them.

``atexit`` handlers do not run when a process dies by SIGKILL, and a parent killed that
way cannot stop its children. On Linux the kernel can do it instead: a child that asked
for a *parent-death signal* (``prctl(PR_SET_PDEATHSIG)``) receives that signal as soon
as the thread that forked it exits. Start the child with the command
:func:`parent_death_command` makes of its own: a small launcher asks for the signal, then
``exec``s the program, whose pid, arguments and environment are the ones asked for.

The signal is tied to the *thread* that forked the child, not to the process: start
long-lived children from a thread that lives as long as they should (the main thread,
or a dedicated spawner thread), never from a short-lived worker thread.

:func:`die_with_parent`, passed as ``preexec_fn``, asks in the child between ``fork`` and
``exec``; it is kept for callers that need no more. But a ``preexec_fn`` makes
:mod:`subprocess` use a plain ``fork``, whose child runs the fork handlers of every
library loaded; where other threads hold locks those handlers need (gRPC's in a Ray
actor), the child hangs before ``exec``, and ``Popen`` with it. The launcher of
:func:`parent_death_command` asks after ``exec`` and needs no ``preexec_fn``, and a child
that is itself Python can call :func:`die_with` first thing, with the pid of the process
that started it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence

_PR_SET_PDEATHSIG = 1

# Looked up once in the parent: the child between fork and exec must not load libraries.
_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
    _prctl = _libc.prctl if _libc is not None else None
except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
    _libc, _prctl = None, None


# Run as `python -I -S -c LAUNCHER parent sig lc_ctype program argv...`: it asks for the
# signal, checks that the parent that started it is still there, and becomes the program.
# Python sets LC_CTYPE when the locale is C (PEP 538); the program gets the value it had.
_LAUNCHER = """\
import ctypes, os, sys
parent, sig, lc_ctype, program, *argv = sys.argv[1:]
ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)
if os.getppid() != int(parent):
    os.kill(os.getpid(), int(sig))
if lc_ctype:
    os.environ["LC_CTYPE"] = lc_ctype[1:]
else:
    os.environ.pop("LC_CTYPE", None)
try:
    os.execv(program, argv)
except OSError as exc:
    sys.stderr.write(f"cannot run {program}: {exc.strerror}\\n")
    sys.exit(127)
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


def parent_death_command(
    argv: Sequence[str],
    sig: int = signal.SIGKILL,
    *,
    executable: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> list[str]:
    """``argv`` as a command whose process receives ``sig`` when the thread that starts
    it exits, asked for after ``exec``: pass it to :class:`subprocess.Popen` in place of
    ``argv``, with no ``preexec_fn`` and no ``executable``.

    The program is ``executable`` or ``argv[0]``, looked up now in the ``PATH`` of
    ``env`` (the environment the child will get; this process's by default), or in
    ``cwd`` (the child's working folder) for a path with a slash. So a missing one
    raises :class:`FileNotFoundError` and a file that cannot be run
    :class:`PermissionError` here, as ``Popen`` would. The launcher then runs it under
    its own pid, with ``argv`` and the environment unchanged. Where the parent died
    before the launcher's request took hold, the launcher sends itself ``sig``. Without
    ``prctl`` (or an interpreter to run the launcher) the command is ``argv`` itself.
    """
    words = [os.fspath(word) for word in argv]
    if not words:
        raise ValueError("an empty command: give at least the program")
    program = _program_path(executable or words[0], env, None if cwd is None else os.fspath(cwd))
    if _prctl is None or not sys.executable:
        return [program, *words[1:]] if executable else words
    environment = os.environ if env is None else env
    lc_ctype = environment.get("LC_CTYPE")
    return [
        sys.executable, "-I", "-S", "-c", _LAUNCHER,
        str(os.getpid()), str(int(sig)), "" if lc_ctype is None else f"={lc_ctype}",
        program, *words,
    ]  # fmt: skip


def _program_path(program: str, env: Mapping[str, str] | None, cwd: str | None) -> str:
    """Where ``program`` is, as ``exec`` in the child would find it (a path with a slash
    is taken from the child's working folder ``cwd``)."""
    if os.sep in program:
        where = os.path.join(cwd, program) if cwd is not None else program
        if not os.path.isfile(where):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if not os.access(where, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
        return program
    search = (os.environ if env is None else env).get("PATH", os.defpath)
    found = shutil.which(program, path=search)
    if found is not None:
        return found
    if shutil.which(program, mode=os.F_OK, path=search) is not None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
