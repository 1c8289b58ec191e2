"""``/ws``: one session per WebSocket, OpenEnv's ``reset`` / ``step`` / ``state`` / ``close``
(and ``mcp``, on a desktop server).

The socket is read all the time, from the moment it opens: while the session opens
(a cluster may take a minute to start its actor), the client's keepalive pings are
answered and its first requests wait their turn; while a step runs, what the client does
meanwhile takes effect at once: leaving (the connection drops) cancels the running step
and closes the session; ``cancel`` stops the step; ``reset`` stops it and starts the new
episode. Other requests are answered in the order they came. Observations are turned
into JSON on a worker thread, never on the event loop, so a step returning megabytes
of captures does not hold up the other sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import BaseModel

from viewfinder.server import wire
from viewfinder.server.deps import Registry, Served
from viewfinder.server.errors import CapacityReachedError, SessionLostError, TaskRejectedError
from viewfinder.server.routes import mcp
from viewfinder.server.served import ServedEnv
from viewfinder.server.sessions import Session, SessionRegistry

router = APIRouter()
#: Writes the reply to a message on a session's environment as JSON text (blocking).
Answer = Callable[[Any, BaseModel], str]
log = logging.getLogger(__name__)

#: Close code when the server ends a session on its own (idle, shutting down).
SERVER_CLOSED = 1001
#: Close code after a SESSION_LOST error: the session's node or process died.
SESSION_LOST_CLOSE = 1011
#: Close code after a connection asked for what the server does not do (a bad query).
BAD_REQUEST_CLOSE = 1008
#: How long a refused WebSocket stays open to answer CAPACITY_REACHED.
REFUSAL_LINGER_S = 5.0


@router.websocket("/ws")
async def session_socket(websocket: WebSocket, registry: Registry, served: Served) -> None:
    """One session for the life of the connection (see :mod:`viewfinder.server.wire`)."""
    await websocket.accept()
    try:
        answer = _answerer(served, websocket.query_params.get("screenshot"))
    except ValueError as exc:
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):
            await websocket.send_json(wire.error_message(wire.VALIDATION_ERROR, str(exc)))
            await websocket.close(code=BAD_REQUEST_CLOSE, reason="bad query parameter")
        return
    # The socket is read from the start, also while the session opens (a cluster may
    # take a minute to start its actor): the client's keepalive pings are answered, and
    # what it sends meanwhile waits in the queue.
    requests: asyncio.Queue[BaseModel | dict[str, Any]] = asyncio.Queue()
    opening = asyncio.create_task(registry.open("ws"))
    answering = asyncio.create_task(
        _answer_once_open(websocket, registry, answer, opening, requests)
    )
    try:
        while True:
            receiving = asyncio.ensure_future(websocket.receive())
            done, _ = await asyncio.wait(
                {receiving, answering}, return_when=asyncio.FIRST_COMPLETED
            )
            if receiving not in done:  # the answering side ended: the socket is closed
                receiving.cancel()
                break
            frame = receiving.result()
            if frame["type"] == "websocket.disconnect":
                break
            session = _opened(opening)
            if session is not None:
                session.touch()
            message = _read(frame, served)
            kind = getattr(message, "type", None)
            if kind == "close":
                break
            if kind in ("cancel", "reset") and session is not None:
                # a reset ends the running episode: its step first
                session.env.cancel(
                    "cancelled by the client" if kind == "cancel" else "cancelled by a reset"
                )
            if kind == "cancel":
                continue
            requests.put_nowait(message)
    except (WebSocketDisconnect, RuntimeError):
        pass  # the client left, or the server closed the socket (the session was reaped)
    finally:
        session = _opened(opening)
        if session is not None:
            session.on_server_close = session.on_lost = None
            session.env.cancel("the client disconnected")  # a running step ends at once
        answering.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await answering
        if not opening.done():  # the client left before its session opened
            opening.cancel()  # the registry closes it once it has started
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await opening
        # A server that stops cancels this handler once its grace period is over; the
        # close goes on in the registry's pool, which the server's shutdown waits for.
        if session is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(registry.close(session))
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # the client left first
            await websocket.close()


def _opened(opening: asyncio.Task[Session]) -> Session | None:
    """The session, once it has opened."""
    if not opening.done() or opening.cancelled() or opening.exception() is not None:
        return None
    return opening.result()


async def _answer_once_open(
    websocket: WebSocket,
    registry: SessionRegistry,
    answer: Answer,
    opening: asyncio.Task[Session],
    requests: asyncio.Queue[BaseModel | dict[str, Any]],
) -> None:
    """Wait for the session to open, then answer the requests in order; or refuse them
    (CAPACITY_REACHED), or say why it could not open."""
    try:
        session = await asyncio.shield(opening)
    except CapacityReachedError as exc:
        refusal = wire.error_message(
            exc.code, str(exc), active_sessions=exc.active_sessions, max_sessions=exc.max_sessions
        )
        await _refuse(websocket, json.dumps(refusal), requests)
        return
    except Exception as exc:  # the provider could not start it (its cluster is gone, ...)
        log.warning("a session could not open: %s", exc)
        error = wire.error_message(wire.SESSION_ERROR, f"the session could not start: {exc}")
        await _refuse(websocket, json.dumps(error), requests, code=SESSION_LOST_CLOSE)
        return

    async def server_closed(reason: str) -> None:
        await websocket.close(code=SERVER_CLOSED, reason=reason[:120])

    async def lost(error: SessionLostError) -> None:  # its cluster's head is gone
        await websocket.send_text(
            json.dumps(wire.error_message(wire.SESSION_LOST, str(error), node=error.node))
        )
        await websocket.close(
            code=SESSION_LOST_CLOSE, reason=f"{wire.SESSION_LOST}: {error.reason}"[:120]
        )

    session.on_server_close = server_closed
    session.on_lost = lost
    await _answer_in_order(websocket, registry, answer, session, requests)


def _answerer(served: ServedEnv, form: str | None) -> Answer:
    """How this connection's replies are written: ``served.answer``, with the last
    capture sent once when the client asked (``?screenshot=deduplicated``)."""
    if wire.screenshot_form(form) == "full":
        return served.answer
    if not getattr(served, "deduplicates", False):
        raise ValueError(
            f"screenshot={form!r} is for code env servers; this one serves {served.name}"
        )
    answer: Any = served.answer  # the env said it takes deduplicated (``deduplicates``)
    return functools.partial(answer, deduplicated=True)


def _read(frame: Mapping[str, Any], served: ServedEnv) -> BaseModel | dict[str, Any]:
    raw = frame.get("text")
    if raw is None:  # a binary frame: say so, and go on
        return wire.error_message(
            wire.INVALID_JSON, "binary frames are not messages; send JSON as text frames"
        )
    return wire.parse_message(raw, served.messages)


async def _answer_in_order(
    websocket: WebSocket,
    registry: SessionRegistry,
    answer: Answer,
    session: Session,
    requests: asyncio.Queue[BaseModel | dict[str, Any]],
) -> None:
    """Answer the requests one after the other, each reply sent as JSON text."""
    while True:
        message = await requests.get()
        if session.closed_by_server is not None:  # reaped or shut down while it waited
            await websocket.close(code=SERVER_CLOSED, reason=session.closed_by_server[:120])
            return
        if isinstance(message, dict):  # an error to answer with
            text = json.dumps(message)
        else:
            text = await _answer(registry, answer, session, message)
        await websocket.send_text(text)
        del text  # an observation can be large: let it go before waiting for the next
        if session.lost is not None:  # said once; the session cannot go on
            reason = f"{wire.SESSION_LOST}: the session's node died"
            await websocket.close(code=SESSION_LOST_CLOSE, reason=reason)
            return


async def _answer(
    registry: SessionRegistry, answer: Answer, session: Session, message: BaseModel
) -> str:
    """The reply to ``message`` as JSON text, built off the event loop."""
    try:
        if isinstance(message, wire.McpMessage):
            reply = await mcp.answer(registry, message.data, session=session)
            return json.dumps({"type": "mcp", "data": reply})
        return await registry.use(session, lambda: answer(session.env, message))
    except TaskRejectedError as exc:  # a reset asked for what the server does not do
        return json.dumps(wire.error_message(wire.VALIDATION_ERROR, str(exc)))
    except SessionLostError as exc:  # its node died: this session only
        await registry.lose(session, exc)
        return json.dumps(wire.error_message(wire.SESSION_LOST, str(exc), node=exc.node))
    except Exception as exc:  # the env itself failed (no display could start, ...)
        log.exception("session %s: %s failed", session.id, type(message).__name__)
        return json.dumps(wire.error_message(wire.EXECUTION_ERROR, f"{type(exc).__name__}: {exc}"))


async def _refuse(
    websocket: WebSocket,
    refusal: str,
    requests: asyncio.Queue[BaseModel | dict[str, Any]],
    code: int = 1000,
) -> None:
    """Say why there is no session (CAPACITY_REACHED first, as OpenEnv does), to
    whatever the client sends, then close.

    Closing right after the first error would race a client that is sending its first
    message (OpenEnv's client sends ``reset`` before reading): its send would fail on a
    closed socket instead of reading the error. So the socket stays open a few seconds.
    """
    with contextlib.suppress(WebSocketDisconnect, RuntimeError, TimeoutError):
        await websocket.send_text(refusal)
        async with asyncio.timeout(REFUSAL_LINGER_S):
            while True:
                await requests.get()
                await websocket.send_text(refusal)
    with contextlib.suppress(RuntimeError, WebSocketDisconnect):
        await websocket.close(code=code)
