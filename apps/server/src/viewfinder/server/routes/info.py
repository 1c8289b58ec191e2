"""``GET /health``, ``/schema`` and ``/metadata``: what the server is and whether it runs."""

from __future__ import annotations

from importlib import metadata
from typing import Any

from fastapi import APIRouter, Request

from viewfinder.codeenv import CodeAction, CodeObservation, CodeState
from viewfinder.server.deps import Registry

router = APIRouter(tags=["info"])


@router.get("/health")
async def health(registry: Registry, request: Request) -> dict[str, Any]:
    """``{"status": "healthy"}`` (OpenEnv's shape), plus session and display counts."""
    pool = registry.pool.stats()
    return {
        "status": "healthy",
        "active_sessions": registry.active,
        "max_sessions": registry.settings.max_sessions,
        "displays": {"warm": pool.warm, "in_use": pool.in_use, "size": pool.size},
        "isolation": getattr(request.app.state, "isolation", None),
    }


@router.get("/schema")
async def schema() -> dict[str, Any]:
    """JSON schemas of the action, the observation and the state (OpenEnv's ``/schema``)."""
    return {
        "action": CodeAction.model_json_schema(),
        "observation": CodeObservation.model_json_schema(),
        "state": CodeState.model_json_schema(),
    }


@router.get("/metadata")
async def environment_metadata() -> dict[str, Any]:
    """Name and description of the environment (OpenEnv's ``EnvironmentMetadata``)."""
    try:
        version: str | None = metadata.version("viewfinder-codeenv")
    except metadata.PackageNotFoundError:
        version = None
    return {
        "name": "viewfinder-codeenv",
        "description": "Runs Python on a virtual display; the code calls capture_screenshot() "
        "to capture its own windows while they are alive.",
        "readme_content": None,
        "version": version,
        "author": None,
        "documentation_url": None,
    }
