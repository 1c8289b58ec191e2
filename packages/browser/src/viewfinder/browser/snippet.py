"""Compiling and running a snippet: async Python with ``session`` and ``page`` in scope.

A snippet is the body of an ``async def``: it may ``await`` at top level and ``return``
a value; without a ``return``, a final bare expression is the value (as in a REPL),
unless that value is a screenshot, which is attached anyway.
The body keeps its own line numbers, so a traceback points at the snippet's lines,
and frames outside the snippet (viewfinder's, the CDP client's) are left out of it.
"""

from __future__ import annotations

import ast
import builtins
import io
import sys
import traceback
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import lru_cache
from types import CodeType
from typing import Any

#: The file name snippet code is compiled under; tracebacks keep only its frames.
SNIPPET_FILENAME = "<snippet>"
_FUNCTION = "__viewfinder_snippet__"
# Python 3.12 added type parameters to function nodes; 3.13 warns when they are missing.
_TYPE_PARAMS: dict[str, Any] = {"type_params": []} if sys.version_info >= (3, 12) else {}
#: Printed output kept per call; an agent gains nothing from megabytes of it.
MAX_OUTPUT_CHARS = 100_000


@dataclass(frozen=True)
class CompiledSnippet:
    """A snippet ready to run: its source lines and the code of its wrapping function."""

    source: str
    code: CodeType
    #: True when the value is that of a final bare expression, not of a ``return``.
    implicit_result: bool = False

    @property
    def lines(self) -> list[str]:
        return self.source.splitlines()

    def coroutine(self, namespace: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        """A fresh coroutine running the snippet with ``namespace`` as its globals."""
        exec(self.code, namespace)
        function = namespace.pop(_FUNCTION)
        return function()


@lru_cache(maxsize=128)
def compile_snippet(source: str) -> CompiledSnippet:
    """Compile ``source`` as the body of an async function.

    Raises ``SyntaxError`` (with the snippet's line and column) for code that does not
    compile, and for a snippet that ``yield``s, which would make it a generator.
    """
    tree = ast.parse(source, filename=SNIPPET_FILENAME, mode="exec")
    body: list[ast.stmt] = list(tree.body) or [ast.Pass()]
    last = body[-1]
    implicit = isinstance(last, ast.Expr) and not _has_return(body)
    if isinstance(last, ast.Expr) and implicit:
        body[-1] = ast.copy_location(ast.Return(value=last.value), last)
    function = ast.AsyncFunctionDef(
        name=_FUNCTION,
        args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], defaults=[]
        ),
        body=body,
        decorator_list=[],
        returns=None,
        lineno=1,
        col_offset=0,
        **_TYPE_PARAMS,
    )
    module = ast.Module(body=[function], type_ignores=[])
    ast.fix_missing_locations(module)
    if _yields(body):
        node = next(n for n in _own_nodes(body) if isinstance(n, ast.Yield | ast.YieldFrom))
        raise SyntaxError(
            "a snippet cannot yield; collect the values in a list and return it",
            (SNIPPET_FILENAME, node.lineno, node.col_offset + 1, _line(source, node.lineno)),
        )
    try:
        code = compile(module, SNIPPET_FILENAME, "exec")
    except SyntaxError as error:
        # Errors the compiler (not the parser) finds carry no source text: add it.
        if error.text is None and error.lineno:
            error.text = _line(source, error.lineno) + "\n"
        raise
    return CompiledSnippet(source=source, code=code, implicit_result=implicit)


def _own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
    """Nodes of the snippet's own scope (not of functions, classes or lambdas in it)."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        found.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
            ):
                stack.append(child)
    return found


def _has_return(body: list[ast.stmt]) -> bool:
    return any(isinstance(node, ast.Return) for node in _own_nodes(body))


def _yields(body: list[ast.stmt]) -> bool:
    return any(isinstance(node, ast.Yield | ast.YieldFrom) for node in _own_nodes(body))


def _line(source: str, lineno: int) -> str:
    lines = source.splitlines()
    return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


# -- printed output -------------------------------------------------------------------


class OutputBuffer:
    """What one call's snippet printed, capped at :data:`MAX_OUTPUT_CHARS`."""

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        self._buffer = io.StringIO()
        self._size = 0
        self._dropped = 0
        self._limit = limit

    def write(self, text: str) -> None:
        room = self._limit - self._size
        if room <= 0:
            self._dropped += len(text)
            return
        kept = text[:room]
        self._buffer.write(kept)
        self._size += len(kept)
        self._dropped += len(text) - len(kept)

    def text(self) -> str:
        value = self._buffer.getvalue()
        if self._dropped:
            value += f"\n[... {self._dropped} more characters of output dropped]\n"
        return value

    def print_function(self) -> Callable[..., None]:
        """A ``print`` that writes here (unless given another ``file``).

        Each call gets its own ``print`` in its snippet's globals, rather than a swapped
        ``sys.stdout``, so two calls running at once never mix their output.
        """

        def snippet_print(
            *values: object,
            sep: str | None = " ",
            end: str | None = "\n",
            file: Any = None,
            flush: bool = False,
        ) -> None:
            if file is not None and file is not sys.stdout:
                builtins.print(*values, sep=sep, end=end, file=file, flush=flush)
                return
            sep = " " if sep is None else sep
            end = "\n" if end is None else end
            self.write(sep.join(str(value) for value in values) + end)

        return snippet_print


# -- reporting failures ---------------------------------------------------------------


def describe_syntax_error(error: SyntaxError) -> str:
    """The compiler's message with the line it is about and a caret under the column."""
    return "".join(traceback.format_exception_only(type(error), error)).rstrip()


def snippet_traceback(error: BaseException, lines: list[str], summary: str | None = None) -> str:
    """A traceback of ``error`` showing only the frames of the snippet's own code.

    The last line is the exception (``ValueError: ...``), or ``summary`` when given.
    """
    frames = [
        (frame.lineno or 0, frame.name)
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename == SNIPPET_FILENAME
    ]
    return _format(frames, lines, summary if summary is not None else exception_line(error))


def suspended_traceback(coroutine: Any, lines: list[str], summary: str) -> str:
    """Where a suspended snippet is waiting, as a traceback of its own lines.

    Follows the chain of awaits from ``coroutine`` down; read it before cancelling, as
    a snippet may swallow the cancellation and carry on elsewhere.
    """
    frames: list[tuple[int, str]] = []
    while coroutine is not None:
        frame = getattr(coroutine, "cr_frame", None) or getattr(coroutine, "gi_frame", None)
        if frame is not None and frame.f_code.co_filename == SNIPPET_FILENAME:
            frames.append((frame.f_lineno, frame.f_code.co_name))
        coroutine = getattr(coroutine, "cr_await", None) or getattr(coroutine, "gi_yieldfrom", None)
    return _format(frames, lines, summary)


def _format(frames: list[tuple[int, str]], lines: list[str], last: str) -> str:
    parts = ["Traceback (most recent call last):\n"] if frames else []
    for lineno, name in frames:
        shown = "<snippet>" if name == _FUNCTION else name
        parts.append(f'  File "{SNIPPET_FILENAME}", line {lineno}, in {shown}\n')
        if 0 < lineno <= len(lines) and lines[lineno - 1].strip():
            parts.append(f"    {lines[lineno - 1].strip()}\n")
    parts.append(last)
    return "".join(parts).rstrip()


def exception_line(error: BaseException) -> str:
    """``ValueError: message``, with the bare class name a reader knows it by."""
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
