"""Listener lists: register callables, call them all, never let one break the others.

Listeners may be plain functions or coroutine functions. A listener that raises is
logged and skipped; the dispatch (and the CDP traffic behind it) goes on.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

#: A listener: any callable; when it returns an awaitable, that is awaited (or scheduled).
Listener = Callable[..., Any]


class Subscription:
    """Handle to one registered listener: call it, or call :meth:`remove`, to unsubscribe.

    Removing twice is harmless.
    """

    def __init__(self, remove: Callable[[], None]) -> None:
        self._remove: Callable[[], None] | None = remove

    @property
    def active(self) -> bool:
        """True until the listener is removed."""
        return self._remove is not None

    def remove(self) -> None:
        """Stop calling the listener."""
        remove, self._remove = self._remove, None
        if remove is not None:
            remove()

    def __call__(self) -> None:
        self.remove()


class ListenerList:
    """The listeners of one thing (an event name, call results, ...), in registration order."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: list[tuple[object, Listener]] = []

    def __bool__(self) -> bool:
        return bool(self._entries)

    def add(self, fn: Listener) -> Subscription:
        """Register ``fn``; the same callable registered twice is called twice."""
        # A fresh token per registration, so each handle removes exactly its own entry.
        token = object()
        self._entries.append((token, fn))

        def remove() -> None:
            self._entries = [entry for entry in self._entries if entry[0] is not token]

        return Subscription(remove)

    def _snapshot(self) -> list[Listener]:
        # Copied so that a listener may unsubscribe itself (or others) while we dispatch.
        return [fn for _, fn in self._entries]

    def emit_nowait(self, *args: Any, tasks: set[asyncio.Task[Any]]) -> None:
        """Call every listener; awaitables they return run as tasks kept in ``tasks``.

        Used where the caller must not wait (the websocket reader): a listener that
        awaits a CDP call would otherwise deadlock the reader that must deliver its answer.
        """
        for fn in self._snapshot():
            try:
                outcome = fn(*args)
            except Exception:  # listener errors are logged, never propagated
                log.exception("%s listener %r raised; ignored", self.what, fn)
                continue
            if inspect.isawaitable(outcome):
                task = asyncio.ensure_future(self._guard(fn, outcome))
                tasks.add(task)
                task.add_done_callback(tasks.discard)

    async def emit(self, *args: Any) -> None:
        """Call every listener in turn, awaiting the ones that return awaitables."""
        for fn in self._snapshot():
            try:
                outcome = fn(*args)
            except Exception:  # listener errors are logged, never propagated
                log.exception("%s listener %r raised; ignored", self.what, fn)
                continue
            if inspect.isawaitable(outcome):
                await self._guard(fn, outcome)

    async def _guard(self, fn: Listener, outcome: Awaitable[Any]) -> None:
        try:
            await outcome
        except asyncio.CancelledError:
            raise
        except Exception:  # listener errors are logged, never propagated
            log.exception("%s listener %r raised; ignored", self.what, fn)
