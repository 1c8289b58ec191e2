"""``create_app(settings)``: the FastAPI application of the code env server."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from viewfinder.codeenv.font_cache import shared_font_cache
from viewfinder.core import get_plugin_manager
from viewfinder.server import wire
from viewfinder.server.auth import TokenAuth
from viewfinder.server.errors import CapacityReachedError
from viewfinder.server.routes import env, info, ws
from viewfinder.server.sessions import SessionRegistry
from viewfinder.server.settings import ServerSettings
from viewfinder.xvfb import DisplayPool

log = logging.getLogger(__name__)


def create_app(settings: ServerSettings | None = None) -> FastAPI:
    """The server app. Its lifespan owns the display pool and the session registry
    (``app.state.pool``, ``app.state.registry``); every session is closed and every
    display stopped when it ends."""
    settings = settings or ServerSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = DisplayPool(
            size=settings.pool_size, width=settings.display_width, height=settings.display_height
        )
        registry = SessionRegistry(settings, pool)
        app.state.pool, app.state.registry = pool, registry
        # Load the plugins now, not on the first capture of the first session.
        await asyncio.to_thread(get_plugin_manager)
        shared_font_cache()
        registry.start_reaper()
        try:
            yield
        finally:
            await registry.stop_reaper()
            await registry.close_all("the server is shutting down")
            await asyncio.to_thread(pool.close)

    app = FastAPI(
        title="viewfinder code env",
        summary="Python on a virtual display with in-execution capture_screenshot(), "
        "over the OpenEnv wire protocol.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.include_router(info.router)
    app.include_router(env.router)
    app.include_router(ws.router)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own answer, but one that can carry what was sent: Infinity or NaN
        # (which Python's JSON reader accepts) cannot be written back as JSON numbers.
        return JSONResponse(
            status_code=422, content={"detail": wire.json_safe(jsonable_encoder(exc.errors()))}
        )

    @app.exception_handler(CapacityReachedError)
    async def capacity_reached(_: Request, exc: CapacityReachedError) -> JSONResponse:
        return JSONResponse(
            status_code=503,
            content={
                "detail": {
                    "code": wire.CAPACITY_REACHED,
                    "message": str(exc),
                    "active_sessions": exc.active_sessions,
                    "max_sessions": exc.max_sessions,
                }
            },
        )

    if settings.token:
        app.add_middleware(TokenAuth, token=settings.token)
    return app
