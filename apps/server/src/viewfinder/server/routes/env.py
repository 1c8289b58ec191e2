"""``POST /reset``, ``POST /step``, ``GET /state``: OpenEnv's stateless HTTP endpoints.

As in OpenEnv, each HTTP call gets an environment of its own that lives for that call
only (a step runs on a fresh episode); an episode of several steps uses the WebSocket.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from viewfinder.codeenv import CodeState, observation_payload
from viewfinder.server.deps import Registry
from viewfinder.server.wire import ResetRequest, StepRequest

router = APIRouter(tags=["environment"])


#: ``POST /reset`` may come without a body, as OpenEnv allows.
OptionalReset = Annotated[ResetRequest, Body(default_factory=ResetRequest)]


@router.post("/reset")
async def reset(registry: Registry, request: OptionalReset) -> dict[str, Any]:
    """Start an episode and return its first observation."""
    async with registry.one_shot() as session:
        observation = await registry.use(
            session, session.env.reset, request.seed, request.episode_id
        )
    return observation_payload(observation)


@router.post("/step")
async def step(registry: Registry, request: StepRequest) -> dict[str, Any]:
    """Run one action on a fresh episode and return the observation."""
    async with registry.one_shot() as session:
        await registry.use(session, session.env.reset)
        observation = await registry.use(
            session, session.env.step, request.action, request.timeout_s
        )
    return observation_payload(observation)


@router.get("/state")
async def state() -> dict[str, Any]:
    """The state of a fresh environment (OpenEnv's HTTP ``/state`` is stateless too)."""
    return CodeState().model_dump()
