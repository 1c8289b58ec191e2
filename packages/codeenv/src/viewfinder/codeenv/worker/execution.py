"""Running one step's code in the worker's persistent namespace.

The code runs with ``exec`` in one globals dict that lives as long as the worker, so
what a step defines is there in the next. Its standard output and error are the
worker's file descriptors 1 and 2 (pipes the parent reads), so ``print``, C
extensions and child processes all land there. Code may close or replace them; they
are put back before and after every step.

Exit codes follow ``python -c``: 0 when the code ran to its end, 1 for an uncaught
exception (its traceback goes to stderr, without the worker's own frames), and the
value given to ``sys.exit()`` / ``raise SystemExit`` (which ends the step, not the
worker), taken modulo 256 as the operating system does (``sys.exit(-1)`` is 255).

A process the code forked (``os.fork()`` with no ``os._exit`` in the child) runs the
rest of the step's code as well, but never gets back into the worker: when the code
ends in any process other than the worker, that process flushes its output and exits
with the step's exit code.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import os
import sys
import traceback
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: File descriptors the worker keeps copies of its stdout/stderr pipes on.
_SAVED_FDS: dict[int, int] = {}


def save_streams(first: int | None = None) -> None:
    """Keep copies of fds 1 and 2 out of the code's way, to restore them after each step.

    ``first``: put the copies at ``first`` and ``first + 1`` (above the code's open-file
    limit, where closing "every" descriptor does not reach them).
    """
    for offset, fd in enumerate((1, 2)):
        if first is None:
            _SAVED_FDS[fd] = os.dup(fd)
        else:
            _SAVED_FDS[fd] = os.dup2(fd, first + offset, inheritable=False)
    # Python made block-buffered streams for the pipes; line-buffered ones keep the
    # order of print() and of direct writes (os.write, C code, children) as written.
    sys.stdout = sys.stderr = None
    restore_streams()


def restore_streams() -> None:
    """Put fds 1 and 2 and ``sys.stdout`` / ``sys.stderr`` back if the code changed them."""
    for fd, saved in _SAVED_FDS.items():
        try:
            same = os.fstat(fd).st_ino == os.fstat(saved).st_ino
        except OSError:  # the code closed it
            same = False
        if not same:
            os.dup2(saved, fd)
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name, None)
        if not _is_ours(stream, fd):
            fresh = io.TextIOWrapper(
                io.FileIO(fd, "w", closefd=False),
                encoding="utf-8",
                errors="backslashreplace",
                line_buffering=True,
            )
            setattr(sys, name, fresh)
            setattr(sys, f"__{name}__", fresh)


def _is_ours(stream: Any, fd: int) -> bool:
    try:
        return isinstance(stream, io.TextIOWrapper) and not stream.closed and stream.fileno() == fd
    except (ValueError, OSError):
        return False


def flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError, AttributeError):  # closed or replaced
            stream.flush()


def new_namespace(builtins_extra: dict[str, Any]) -> dict[str, Any]:
    """The globals of a fresh episode: ``__main__`` plus the names the env provides."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    namespace.update(builtins_extra)
    return namespace


def run_code(code: str, step: int, namespace: dict[str, Any]) -> int:
    """Run ``code`` in ``namespace``; return its exit code (see the module docstring)."""
    worker = os.getpid()
    status = _run(code, step, namespace)
    if os.getpid() != worker:
        # A fork of the worker that came back out of the code: its copy of the worker's
        # loop would read the next step's commands. Only the worker may return.
        flush_streams()
        os._exit(status)
    return status


def _run(code: str, step: int, namespace: dict[str, Any]) -> int:
    filename = f"<step {step}>"
    # Tracebacks then show the code's own lines, as they do for a file.
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    try:
        compiled = compile(code, filename, "exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        # too much code or too deeply nested code fails the step, not the worker
        _report(exc, None)
        return 1
    try:
        exec(compiled, namespace)
    except SystemExit as exc:
        return _exit_status(exc)
    except BaseException as exc:
        # Skip this frame: the traceback starts in the code, as `python file.py` shows it.
        _report(exc, exc.__traceback__.tb_next if exc.__traceback__ else None)
        return 1
    return 0


def _report(exc: BaseException, tb: Any) -> None:
    """Print the traceback to the code's stderr, put back first if the code closed it."""
    try:
        traceback.print_exception(type(exc), exc, tb, file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # closed, replaced or broken by the code
        restore_streams()
        with contextlib.suppress(OSError, ValueError):
            traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def _exit_status(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, bool):
        return int(code)
    if isinstance(code, int):
        # what the operating system keeps of it, as `python -c` reports it
        return (code if -(2**63) <= code < 2**63 else -1) & 0xFF
    print(code, file=sys.stderr)
    return 1
