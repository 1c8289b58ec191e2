"""``POST /reset``, ``POST /step`` of an environment that brings no routes of its own.

A plugin's environment (:class:`~viewfinder.server.served.ServedEnv`) needs only its
WebSocket messages and :meth:`~viewfinder.server.served.ServedEnv.answer`: the body of
``POST /reset`` is a ``reset`` message's ``data``, the body of ``POST /step`` a ``step``
message's ``data``; the answer is the observation (``data`` of the WebSocket reply).
As for the built-in envs, each call gets a session of its own for that call only.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from viewfinder.server.deps import Registry, Served
from viewfinder.server.routes.env import reply_json
from viewfinder.server.served import ServedEnv

router = APIRouter(tags=["environment"])
#: Any JSON body, checked against the env's own message models.
AnyBody = Annotated[Any, Body()]


@router.post("/reset")
async def reset(
    registry: Registry, served: Served, http: Request, body: AnyBody = None
) -> Response:
    """Start an episode and return its first observation."""
    return await _answer(registry, served, http, "reset", body or {})


@router.post("/step")
async def step(registry: Registry, served: Served, http: Request, body: AnyBody = None) -> Response:
    """Run one action on a fresh episode and return the observation."""
    return await _answer(registry, served, http, "step", body)


async def _answer(
    registry: Any, served: ServedEnv, http: Request, kind: str, data: Any
) -> Response:
    model = served.messages.get(kind)
    if model is None:
        return JSONResponse(status_code=404, content={"detail": f"this env takes no {kind}"})
    try:
        message: BaseModel = model.model_validate({"type": kind, "data": data})
    except ValidationError as exc:
        errors = [
            {"loc": ["body", *error["loc"][1:]], "msg": error["msg"], "type": error["type"]}
            for error in exc.errors(include_url=False)
        ]
        return JSONResponse(status_code=422, content={"detail": errors})
    async with registry.one_shot() as session:
        env = session.env

        def work() -> str:
            reply = json.loads(served.answer(env, message))
            return json.dumps(reply.get("data", reply))

        return await reply_json(registry, session, http, work)
