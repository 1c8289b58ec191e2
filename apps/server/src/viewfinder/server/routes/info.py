"""``GET /health``, ``/schema``, ``/metadata`` and ``/state``: what the server is and
whether it runs."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from viewfinder.server.deps import Registry, Served

router = APIRouter(tags=["info"])


@router.get("/health")
async def health(registry: Registry, request: Request) -> dict[str, Any]:
    """``{"status": "healthy"}`` (OpenEnv's shape), plus which environment is served,
    session counts, and where sessions run (``provider``: its name, and its displays
    for ``local`` or its nodes with their slots and sessions for ``ray``)."""
    provider = await registry.call(registry.provider.stats)
    return {
        "status": "healthy",
        "env": registry.settings.env,
        "active_sessions": registry.active,
        "max_sessions": registry.settings.max_sessions,
        "lost_sessions": registry.lost,
        "displays": provider.get("displays"),
        "provider": provider,
        "isolation": getattr(request.app.state, "isolation", None),
    }


@router.get("/schema")
async def schema(served: Served) -> dict[str, Any]:
    """JSON schemas of the action, the observation and the state (OpenEnv's ``/schema``)."""
    return served.schema()


@router.get("/metadata")
async def environment_metadata(served: Served) -> dict[str, Any]:
    """Name and description of the environment (OpenEnv's ``EnvironmentMetadata``)."""
    return served.metadata()


@router.get("/state")
async def state(served: Served) -> dict[str, Any]:
    """The state of a fresh environment (OpenEnv's HTTP ``/state`` is stateless too)."""
    return served.fresh_state()
