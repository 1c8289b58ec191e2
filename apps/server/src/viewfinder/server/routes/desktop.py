"""``POST /reset``, ``POST /step`` of the desktop env: OpenEnv's stateless HTTP endpoints.

As for the code env, each call gets a session of its own that lives for that call only:
``/reset`` starts the task and answers where its screen is; ``/step`` lists the tools,
or starts the server's task and calls one tool on it. An episode of several calls uses
the WebSocket, or ``/mcp`` with a session.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Body, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from viewfinder.server import wire
from viewfinder.server.deps import Registry
from viewfinder.server.desktop_task import DesktopTask
from viewfinder.server.errors import SessionLostError, TaskRejectedError
from viewfinder.server.mcp_wire import ToolAction, step_payload
from viewfinder.server.routes.env import reply_json
from viewfinder.server.sessions import Session, SessionRegistry

router = APIRouter(tags=["environment"])

#: ``POST /reset`` may come without a body: the server's task.
OptionalTask = Annotated[DesktopTask, Body(default_factory=DesktopTask)]


class DesktopStepRequest(BaseModel):
    """Body of a desktop server's ``POST /step``."""

    model_config = ConfigDict(extra="forbid")

    action: ToolAction
    request_id: str | None = Field(default=None, max_length=255)


@router.post("/reset")
async def reset(registry: Registry, task: OptionalTask, http: Request) -> Response:
    """Start the task on a fresh desktop, answer where its screen is, and end it."""
    async with registry.one_shot() as session:
        env = session.env
        return await _reply(registry, session, http, lambda: json.dumps(env.reset(task)))


@router.post("/step")
async def step(registry: Registry, request: DesktopStepRequest, http: Request) -> Response:
    """List the tools, or call one on a fresh desktop with the server's task."""
    action = request.action
    async with registry.one_shot() as session:
        env = session.env  # a tool call starts the server's task first
        return await _reply(
            registry, session, http, lambda: json.dumps(step_payload(env.step(action)))
        )


async def _reply(
    registry: SessionRegistry, session: Session, http: Request, work: Callable[[], str]
) -> Response:
    try:
        return await reply_json(registry, session, http, work)
    except TaskRejectedError as exc:
        return JSONResponse(
            status_code=422,
            content={
                "detail": [{"type": "task_rejected", "loc": ["body", "apps"], "msg": str(exc)}]
            },
        )
    except SessionLostError:
        raise  # answered as SESSION_LOST by the app
    except Exception as exc:  # the desktop could not start: an app failed, ...
        return JSONResponse(
            status_code=500,
            content={
                "detail": {"code": wire.EXECUTION_ERROR, "message": f"{type(exc).__name__}: {exc}"}
            },
        )
