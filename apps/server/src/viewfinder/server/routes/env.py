"""``POST /reset``, ``POST /step`` of the code env: OpenEnv's stateless HTTP endpoints.

As in OpenEnv, each HTTP call gets an environment of its own that lives for that call
only (a step runs on a fresh episode); an episode of several steps uses the WebSocket.
A client that goes away before its step ends cancels it. Replies are turned into JSON
on a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Body, Request, Response
from fastapi.responses import JSONResponse

from viewfinder.codeenv.models import observation_json
from viewfinder.server.deps import Registry
from viewfinder.server.errors import TaskRejectedError
from viewfinder.server.sessions import Session, SessionRegistry
from viewfinder.server.wire import ResetRequest, StepRequest

router = APIRouter(tags=["environment"])
T = TypeVar("T")

#: How often a running step looks whether its HTTP client is still there, in seconds.
DISCONNECT_POLL_S = 0.25

#: ``POST /reset`` may come without a body, as OpenEnv allows.
OptionalReset = Annotated[ResetRequest, Body(default_factory=ResetRequest)]


@router.post("/reset")
async def reset(registry: Registry, request: OptionalReset, http: Request) -> Response:
    """Start an episode and return its first observation."""
    async with registry.one_shot() as session:
        env = session.env
        try:
            return await reply_json(
                registry,
                session,
                http,
                lambda: observation_json(
                    env.reset(request.seed, request.episode_id, task=request.task)
                ),
            )
        except TaskRejectedError as exc:  # a task this server does not run
            detail = [{"type": "task_rejected", "loc": ["body", "task"], "msg": str(exc)}]
            return JSONResponse(status_code=422, content={"detail": detail})


@router.post("/step")
async def step(registry: Registry, request: StepRequest, http: Request) -> Response:
    """Run one action on a fresh episode and return the observation."""
    async with registry.one_shot() as session:
        env = session.env
        await registry.use(session, env.reset)
        return await reply_json(
            registry,
            session,
            http,
            lambda: observation_json(env.step(request.action, request.timeout_s)),
        )


async def reply_json(
    registry: SessionRegistry,
    session: Session,
    http: Request,
    work: Callable[[], str],
) -> Response:
    """Run ``work`` (blocking, it returns JSON text) off the event loop and answer with
    what it returns; cancel it if the client leaves (499)."""
    text = await while_connected(http, session, registry.use(session, work))
    if text is None:
        return Response(status_code=499)
    return Response(text, media_type="application/json")


async def while_connected(http: Request, session: Session, work: Awaitable[T]) -> T | None:
    """``await work``, unless the HTTP client leaves first: then the session's running
    step is cancelled, and None returned once it ended."""
    running = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({running}, timeout=DISCONNECT_POLL_S)
        if done:
            return running.result()
        if await http.is_disconnected():
            session.env.cancel("the client disconnected")
            await running  # returns at once; nobody reads the answer
            return None
