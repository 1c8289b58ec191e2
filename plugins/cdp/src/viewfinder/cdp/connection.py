"""One websocket to a browser's DevTools endpoint, speaking the CDP message protocol.

The connection knows the wire format (``{"id", "method", "params", "sessionId"}``
requests, ``{"id", "result" | "error"}`` responses, ``{"method", "params"}`` events)
and nothing about any particular method. A reader task matches responses to calls by
id and hands events to listeners. When the socket closes, for whatever reason, every
pending and later call fails at once with :class:`CDPConnectionClosedError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from viewfinder.cdp.errors import (
    CDPConnectError,
    CDPConnectionClosedError,
    CDPError,
    CDPTimeoutError,
)
from viewfinder.cdp.listeners import Listener, ListenerList, Subscription

if TYPE_CHECKING:
    from viewfinder.cdp.session import CDPSession

log = logging.getLogger(__name__)

#: Default seconds a call may take before :class:`CDPTimeoutError`.
DEFAULT_CALL_TIMEOUT = 30.0
#: Largest message accepted. A full-page PNG of a long page, base64-encoded, runs to
#: tens of megabytes; websockets' 1 MiB default would close the socket on the first one.
MAX_MESSAGE_BYTES = 512 * 1024 * 1024

# websockets >= 15 honours proxy environment variables by default; a DevTools endpoint
# is almost always on loopback and must never be sent through an HTTP proxy.
_NO_PROXY: dict[str, Any] = (
    {"proxy": None} if "proxy" in inspect.signature(ws_connect.__init__).parameters else {}
)

#: Predicate over an event's params, for :meth:`CDPConnection.wait_for_event`.
EventPredicate = Callable[[dict[str, Any]], bool]


@dataclass
class _PendingCall:
    future: asyncio.Future[dict[str, Any]]
    method: str


class CDPConnection:
    """A CDP connection to a browser (the ``/devtools/browser/...`` websocket).

    Open one with :meth:`open` (a ``ws://`` URL) or :func:`viewfinder.cdp.connect`
    (also ``http://host:port``). All methods must be used on the event loop that opened
    the connection. Use it as an async context manager, or call :meth:`close`.

    Listeners registered with ``session_id=None`` see the browser target's own traffic;
    a :class:`~viewfinder.cdp.CDPSession` registers with its session id to see a page's.
    """

    def __init__(self, websocket: ClientConnection, url: str) -> None:
        self.url = url
        self._ws = websocket
        self._ids = itertools.count(1)
        self._pending: dict[int, _PendingCall] = {}
        self._events: dict[tuple[str | None, str], ListenerList] = {}
        self._results: dict[str | None, ListenerList] = {}
        self._waiters: set[asyncio.Future[dict[str, Any]]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Why the socket closed, once it has.
        self._closed: str | None = None
        self._reader = asyncio.get_running_loop().create_task(
            self._read(), name=f"cdp-reader {url}"
        )

    @classmethod
    async def open(cls, ws_url: str, *, timeout: float = 10.0) -> CDPConnection:
        """Open the websocket at ``ws_url`` (``ws://host:port/devtools/browser/<id>``)."""
        try:
            websocket = await ws_connect(
                ws_url,
                open_timeout=timeout,
                max_size=MAX_MESSAGE_BYTES,
                # Screenshots are base64 of already-compressed images: deflate costs CPU
                # and saves nothing.
                compression=None,
                close_timeout=2,
                **_NO_PROXY,
            )
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise CDPConnectError(ws_url, f"websocket connection failed ({exc})") from exc
        return cls(websocket, ws_url)

    # -- state ------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once the socket has closed; every call then fails."""
        return self._closed is not None

    async def close(self) -> None:
        """Close the websocket; pending calls fail with :class:`CDPConnectionClosedError`."""
        if self._closed is None:
            self._fail_all("the CDP connection was closed by this client")
        await self._ws.close()
        # Async listeners still running would otherwise keep close() waiting on them.
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(self._reader, *self._tasks, return_exceptions=True)

    async def __aenter__(self) -> CDPConnection:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- calls ------------------------------------------------------------------------

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session_id: str | None = None,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> dict[str, Any]:
        """Call ``method`` and return its result.

        ``session_id`` addresses a flattened target session. Raises :class:`CDPError`
        for an error response, :class:`CDPTimeoutError` after ``timeout`` seconds and
        :class:`CDPConnectionClosedError` when the socket is or becomes closed. After a
        successful call the call-result listeners of ``session_id`` run (async ones are
        awaited) before this returns.
        """
        if self._closed is not None:
            raise self._closed_error(method)
        call_id = next(self._ids)
        message: dict[str, Any] = {"id": call_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = _PendingCall(future, method)
        try:
            async with asyncio.timeout(timeout):
                # On a closed socket the reader fails the future and says why; wait for it.
                with contextlib.suppress(ConnectionClosed):
                    await self._ws.send(json.dumps(message))
                result = await future
        except TimeoutError:
            raise CDPTimeoutError(f"{method} (call id {call_id})", timeout, method=method) from None
        finally:
            self._pending.pop(call_id, None)
        listeners = self._results.get(session_id)
        if listeners:
            await listeners.emit(method, params or {}, result)
        return result

    def on_call_result(self, fn: Listener, *, session_id: str | None = None) -> Subscription:
        """Call ``fn(method, params, result)`` after every successful call of ``session_id``.

        Failed calls (error responses, timeouts, closed sockets) are not reported.
        """
        listeners = self._results.setdefault(session_id, ListenerList("call-result"))
        return listeners.add(fn)

    # -- events -----------------------------------------------------------------------

    def on(self, event: str, fn: Listener, *, session_id: str | None = None) -> Subscription:
        """Call ``fn(params)`` for every ``event`` (``"Page.loadEventFired"``) of ``session_id``.

        ``fn`` runs on the reader; an async ``fn`` is scheduled as a task so that it may
        itself make calls. Returns a handle that unsubscribes when called.
        """
        listeners = self._events.setdefault((session_id, event), ListenerList(event))
        return listeners.add(fn)

    def expect_event(
        self,
        event: str,
        predicate: EventPredicate | None = None,
        *,
        session_id: str | None = None,
    ) -> asyncio.Future[dict[str, Any]]:
        """A future for the params of the next matching ``event``, listening from now on.

        Register before triggering the event, then await the future (with a timeout).
        It fails with :class:`CDPConnectionClosedError` if the socket closes first.
        """
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self._closed is not None:
            future.set_exception(self._closed_error())
            return future

        def deliver(params: dict[str, Any]) -> None:
            if not future.done() and (predicate is None or predicate(params)):
                future.set_result(params)

        subscription = self.on(event, deliver, session_id=session_id)
        self._waiters.add(future)

        def forget(_: object) -> None:
            subscription.remove()
            self._waiters.discard(future)

        future.add_done_callback(forget)
        return future

    async def wait_for_event(
        self,
        event: str,
        predicate: EventPredicate | None = None,
        timeout: float = DEFAULT_CALL_TIMEOUT,
        *,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Wait for the next matching ``event`` and return its params.

        Only events arriving after this is called count; to not miss one your own call
        triggers, use :meth:`expect_event` before the call.
        """
        future = self.expect_event(event, predicate, session_id=session_id)
        return await wait_for_future(future, f"event {event}", timeout)

    # -- pages ------------------------------------------------------------------------

    async def new_page(
        self,
        url: str | None = None,
        width: int = 1280,
        height: int = 800,
        *,
        timeout: float = DEFAULT_CALL_TIMEOUT,
    ) -> CDPSession:
        """Open a tab with a ``width`` x ``height`` viewport, load ``url``; return its session."""
        from viewfinder.cdp.session import CDPSession

        return await CDPSession.create(self, url, width=width, height=height, timeout=timeout)

    # -- reader -----------------------------------------------------------------------

    async def _read(self) -> None:
        reason = "the browser closed the DevTools connection"
        try:
            async for raw in self._ws:
                self._dispatch(raw)
        except ConnectionClosed as exc:
            reason = f"the DevTools connection dropped ({exc}); did the browser exit or crash?"
        except Exception as exc:  # a bug here must not leave calls hanging forever
            log.exception("CDP reader failed")
            reason = f"the CDP reader failed: {exc!r}"
        finally:
            self._fail_all(reason)

    def _dispatch(self, raw: str | bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            log.warning("ignoring a CDP message that is not JSON: %.200r", raw)
            return
        if "id" in message:
            pending = self._pending.get(message["id"])
            if pending is None or pending.future.done():
                return  # the answer to a call that already timed out
            if "error" in message:
                error = message["error"]
                pending.future.set_exception(
                    CDPError(
                        str(error.get("message", "unknown error"))
                        + (f": {error['data']}" if error.get("data") else ""),
                        method=pending.method,
                        code=error.get("code"),
                    )
                )
            else:
                pending.future.set_result(message.get("result", {}))
            return
        event = message.get("method")
        if not isinstance(event, str):
            return
        listeners = self._events.get((message.get("sessionId"), event))
        if listeners:
            listeners.emit_nowait(message.get("params", {}), tasks=self._tasks)

    def _fail_all(self, reason: str) -> None:
        if self._closed is None:
            self._closed = reason
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(self._closed_error(pending.method))
        for waiter in list(self._waiters):
            if not waiter.done():
                waiter.set_exception(self._closed_error())

    def _closed_error(self, method: str | None = None) -> CDPConnectionClosedError:
        # A fresh exception each time: one instance raised in many places would pile up
        # the tracebacks of all of them.
        return CDPConnectionClosedError(self._closed or "closed", method=method)


async def wait_for_future(
    future: asyncio.Future[dict[str, Any]], what: str, timeout: float
) -> dict[str, Any]:
    """Await ``future`` for at most ``timeout`` seconds, cancelling it on timeout."""
    try:
        async with asyncio.timeout(timeout):
            return await future
    except TimeoutError:
        raise CDPTimeoutError(what, timeout) from None
