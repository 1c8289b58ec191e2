"""``POST /reset``, ``POST /step``, ``GET /state``: OpenEnv's stateless HTTP endpoints.

As in OpenEnv, each HTTP call gets an environment of its own that lives for that call
only (a step runs on a fresh episode); an episode of several steps uses the WebSocket.
A client that goes away before its step ends cancels it. Replies are turned into JSON
on a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response

from viewfinder.codeenv import CodeObservation, CodeState
from viewfinder.codeenv.models import observation_json
from viewfinder.server.deps import Registry
from viewfinder.server.sessions import Session, SessionRegistry
from viewfinder.server.wire import ResetRequest, StepRequest

router = APIRouter(tags=["environment"])

#: How often a running step looks whether its HTTP client is still there, in seconds.
DISCONNECT_POLL_S = 0.25

#: ``POST /reset`` may come without a body, as OpenEnv allows.
OptionalReset = Annotated[ResetRequest, Body(default_factory=ResetRequest)]


@router.post("/reset")
async def reset(registry: Registry, request: OptionalReset, http: Request) -> Response:
    """Start an episode and return its first observation."""
    async with registry.one_shot() as session:
        return await _reply(
            registry, session, http, lambda: session.env.reset(request.seed, request.episode_id)
        )


@router.post("/step")
async def step(registry: Registry, request: StepRequest, http: Request) -> Response:
    """Run one action on a fresh episode and return the observation."""
    async with registry.one_shot() as session:
        await registry.use(session, session.env.reset)
        return await _reply(
            registry, session, http, lambda: session.env.step(request.action, request.timeout_s)
        )


@router.get("/state")
async def state() -> dict[str, Any]:
    """The state of a fresh environment (OpenEnv's HTTP ``/state`` is stateless too)."""
    return CodeState().model_dump()


async def _reply(
    registry: SessionRegistry,
    session: Session,
    http: Request,
    work: Callable[[], CodeObservation],
) -> Response:
    """Run ``work`` and answer its observation as JSON; cancel it if the client leaves."""
    running = asyncio.ensure_future(registry.use(session, lambda: observation_json(work())))
    while True:
        done, _ = await asyncio.wait({running}, timeout=DISCONNECT_POLL_S)
        if done:
            return Response(running.result(), media_type="application/json")
        if await http.is_disconnected():
            session.env.cancel("the client disconnected")
            await running  # returns at once; nobody reads the answer
            return Response(status_code=499)
