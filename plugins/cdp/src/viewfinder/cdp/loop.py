"""A private event loop on its own thread, so async CDP code serves sync callers too.

The CDP client is asyncio at heart and its objects belong to the loop that made them.
A backend owns one :class:`LoopThread` and runs every coroutine there: sync code calls
:meth:`LoopThread.run`, async code on any other loop awaits :meth:`LoopThread.arun`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """An asyncio event loop running forever on a daemon thread until :meth:`stop`."""

    def __init__(self, name: str = "viewfinder-cdp-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            # Finish on this thread: stop() may be called from a thread running another
            # loop, where run_until_complete would refuse to run.
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def _submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if threading.current_thread() is self._thread:
            coro.close()
            # Blocking the loop's own thread on the loop would wait forever.
            raise RuntimeError(
                "LoopThread.run() was called from its own loop; await the coroutine instead"
            )
        if not self.running:
            coro.close()
            raise RuntimeError("the CDP event loop thread has been stopped")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and block until it is done; its exception propagates.

        Interrupting the wait (Ctrl-C) cancels the coroutine.
        """
        future = self._submit(coro)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the loop thread, from any other event loop.

        Cancelling the awaiting task cancels the coroutine on the loop thread.
        """
        return await asyncio.wrap_future(self._submit(coro))

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel what still runs, stop the loop and join the thread. Idempotent."""
        if self.loop.is_closed():
            return
        if self._thread.is_alive():
            if threading.current_thread() is self._thread:
                raise RuntimeError("LoopThread.stop() was called from its own loop")
            # The loop may already be stopping; closing below happens either way.
            with contextlib.suppress(TimeoutError, RuntimeError):
                asyncio.run_coroutine_threadsafe(_cancel_others(), self.loop).result(timeout)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)


async def _cancel_others() -> None:
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
