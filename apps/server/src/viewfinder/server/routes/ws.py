"""``/ws``: one session per WebSocket, OpenEnv's ``reset`` / ``step`` / ``state`` / ``close``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from viewfinder.codeenv import observation_payload
from viewfinder.server import wire
from viewfinder.server.deps import Registry
from viewfinder.server.errors import CapacityReachedError
from viewfinder.server.sessions import Session

router = APIRouter()
log = logging.getLogger(__name__)

#: Close code when the server ends a session on its own (idle, shutting down).
SERVER_CLOSED = 1001
#: How long a refused WebSocket stays open to answer CAPACITY_REACHED.
REFUSAL_LINGER_S = 5.0


@router.websocket("/ws")
async def session_socket(websocket: WebSocket, registry: Registry) -> None:
    """One session for the life of the connection (see :mod:`viewfinder.server.wire`)."""
    await websocket.accept()
    try:
        session = await registry.open("ws")
    except CapacityReachedError as exc:
        await _refuse(websocket, exc)
        return

    async def server_closed(reason: str) -> None:
        await websocket.close(code=SERVER_CLOSED, reason=reason[:120])

    session.on_server_close = server_closed
    try:
        while True:
            frame = await websocket.receive()
            if frame["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(frame.get("code", 1000), frame.get("reason"))
            session.touch()
            raw = frame.get("text")
            if raw is None:  # a binary frame: say so, and go on
                message: Any = wire.error_message(
                    wire.INVALID_JSON, "binary frames are not messages; send JSON as text frames"
                )
            else:
                message = wire.parse_message(raw)
            if isinstance(message, wire.CloseMessage):
                break
            reply = (
                message if isinstance(message, dict) else await _answer(registry, session, message)
            )
            await websocket.send_json(reply)
    except WebSocketDisconnect:
        pass
    except RuntimeError:
        # Sending on a socket the server closed meanwhile (the session was reaped).
        if registry.get(session.id) is not None:
            raise
    finally:
        session.on_server_close = None
        await registry.close(session)
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # the client left first
            await websocket.close()


async def _refuse(websocket: WebSocket, exc: CapacityReachedError) -> None:
    """Say CAPACITY_REACHED first (as OpenEnv does), to whatever the client sends, then close.

    Closing right after the first error would race a client that is sending its first
    message (OpenEnv's client sends ``reset`` before reading): its send would fail on a
    closed socket instead of reading the error. So the socket stays open a few seconds.
    """
    refusal = wire.error_message(
        exc.code, str(exc), active_sessions=exc.active_sessions, max_sessions=exc.max_sessions
    )
    with contextlib.suppress(WebSocketDisconnect, RuntimeError, TimeoutError):
        await websocket.send_json(refusal)
        async with asyncio.timeout(REFUSAL_LINGER_S):
            while True:
                await websocket.receive_text()
                await websocket.send_json(refusal)
    with contextlib.suppress(RuntimeError, WebSocketDisconnect):
        await websocket.close()


async def _answer(registry: Registry, session: Session, message: Any) -> dict[str, Any]:
    env = session.env
    try:
        if isinstance(message, wire.ResetMessage):
            observation = await registry.use(
                session, env.reset, message.data.seed, message.data.episode_id
            )
            return {"type": "observation", "data": observation_payload(observation)}
        if isinstance(message, wire.StepMessage):
            observation = await registry.use(session, env.step, message.data)
            return {"type": "observation", "data": observation_payload(observation)}
        return {"type": "state", "data": env.state.model_dump()}
    except Exception as exc:  # the env itself failed (no display could start, ...)
        log.exception("session %s: %s failed", session.id, type(message).__name__)
        return wire.error_message(wire.EXECUTION_ERROR, f"{type(exc).__name__}: {exc}")
