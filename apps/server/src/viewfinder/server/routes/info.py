"""``GET /health``, ``/schema``, ``/metadata`` and ``/state``: what the server is and
whether it runs."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from viewfinder.server.deps import Registry, Served
from viewfinder.server.sessions import SessionRegistry

router = APIRouter(tags=["info"])
T = TypeVar("T")


#: How long ``/health`` waits for the provider's answer (a cluster's head may be gone).
HEALTH_TIMEOUT_S = 0.5


@router.get("/health")
async def health(registry: Registry, request: Request) -> Response:
    """``{"status": "healthy"}`` (OpenEnv's shape), plus which environment is served,
    session counts, and where sessions run (``provider``: its name, and its displays
    for ``local`` or its nodes with their slots and sessions for ``ray``).

    It answers within a second whatever the provider does: a provider that does not
    answer in time (a cluster whose head is gone) makes it ``"unhealthy"``, 503, with
    ``provider.state`` and ``provider.error`` saying why; so does a cluster that has
    lost its head (``provider.state == "head lost"``)."""
    provider = await _provider_stats(registry, request)
    healthy = provider.get("state", "connected") == "connected"
    body = {
        "status": "healthy" if healthy else "unhealthy",
        "env": registry.settings.env,
        "active_sessions": registry.active,
        "max_sessions": registry.settings.max_sessions,
        "lost_sessions": registry.lost,
        "displays": provider.get("displays"),
        "provider": provider,
        "isolation": getattr(request.app.state, "isolation", None),
    }
    return JSONResponse(body, status_code=200 if healthy else 503)


async def _provider_stats(registry: SessionRegistry, request: Request) -> dict[str, Any]:
    """The provider's stats within :data:`HEALTH_TIMEOUT_S`. One call at a time runs:
    while a call hangs (on a cluster whose head is gone), later ones wait for it rather
    than each taking a thread of the session pool."""
    head_lost = getattr(registry.provider, "head_lost", None)
    if callable(head_lost) and head_lost() is not None:
        stats: dict[str, Any] = registry.provider.stats()  # from memory, then: no wait
        return stats
    running: asyncio.Future[dict[str, Any]] | None = getattr(
        request.app.state, "provider_stats", None
    )
    if running is None or running.done():
        running = _in_a_thread_of_its_own(registry.provider.stats)
        request.app.state.provider_stats = running
    try:
        return await asyncio.wait_for(asyncio.shield(running), HEALTH_TIMEOUT_S)
    except TimeoutError:
        return {
            "name": getattr(registry.provider, "name", None),
            "state": "unreachable",
            "error": f"the provider did not answer within {HEALTH_TIMEOUT_S:g} s",
        }
    except Exception as exc:  # the provider failed to say (its cluster is gone, ...)
        return {
            "name": getattr(registry.provider, "name", None),
            "state": "unreachable",
            "error": f"{type(exc).__name__}: {exc}",
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


def _in_a_thread_of_its_own(function: Callable[[], T]) -> asyncio.Future[T]:
    """``function()`` on a daemon thread: a call that never returns (into a cluster
    whose head is gone) holds no thread of the session pool, nor the process's exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def run() -> None:
        try:
            value = function()
        except Exception as exc:
            loop.call_soon_threadsafe(settle, functools.partial(future.set_exception, exc))
        else:
            loop.call_soon_threadsafe(settle, functools.partial(future.set_result, value))

    threading.Thread(target=run, name="viewfinder-provider-stats", daemon=True).start()
    return future
