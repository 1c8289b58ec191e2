"""``create_app(settings)``: the FastAPI application of the server (any registered env)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from viewfinder.codeenv.font_cache import shared_font_cache
from viewfinder.core import get_plugin_manager
from viewfinder.core.providers import ProviderError, SessionProvider, open_provider
from viewfinder.core.web_access import guard, require_guard
from viewfinder.server import wire
from viewfinder.server.auth import server_access
from viewfinder.server.errors import (
    CapacityReachedError,
    IsolationUnavailableError,
    SessionLostError,
)
from viewfinder.server.provided import reap_leftovers
from viewfinder.server.routes import info, ws
from viewfinder.server.served import env_routers, served_env
from viewfinder.server.sessions import SessionRegistry
from viewfinder.server.settings import ServerSettings

log = logging.getLogger(__name__)

#: Seconds uvicorn waits for open connections when it stops, after the running steps
#: were cancelled: a stop takes a few seconds at most, whatever the clients do.
GRACEFUL_SHUTDOWN_S = 2.0
#: What a step cancelled by the server's stop says.
SHUTTING_DOWN = "the server is shutting down"


def uvicorn_server(app: FastAPI, **config: Any) -> uvicorn.Server:
    """A uvicorn server for ``app`` that, when told to stop (SIGTERM, SIGINT,
    ``should_exit``), first cancels every running step, so no connection keeps it
    waiting; ``config`` goes to ``uvicorn.Config``."""
    config.setdefault("ws", "websockets-sansio")
    config.setdefault("ws_max_size", 64 * 1024 * 1024)
    # permessage-deflate compresses each reply on the event loop: a step's 30 MB of
    # captures held every other session for about a second (docs/decisions.md, 32)
    config.setdefault("ws_per_message_deflate", False)
    config.setdefault("timeout_graceful_shutdown", GRACEFUL_SHUTDOWN_S)
    return _Server(uvicorn.Config(require_guard(app), **config))


class _Server(uvicorn.Server):
    #: Why the server stopped on its own (its cluster's head is gone, with
    #: ``on_head_lost="exit"``), or None: ``viewfinder serve`` says it and exits 0.
    stopped_because: str | None = None

    async def on_tick(self, counter: int) -> bool:
        registry = getattr(getattr(self.config.app, "state", None), "registry", None)
        reason = getattr(registry, "stop_reason", None)
        if reason is not None and self.stopped_because is None:
            self.stopped_because = reason
            cancel_steps(self.config.app)
            self.should_exit = True
        return await super().on_tick(counter)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        _disarm_abort_timer()
        cancel_steps(self.config.app)
        super().handle_exit(sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # SIGHUP (the terminal closed) stops the server as SIGTERM does; uvicorn itself
        # handles only SIGINT and SIGTERM
        if threading.current_thread() is not threading.main_thread():
            with super().capture_signals():
                yield
            return
        before = signal.signal(signal.SIGHUP, self.handle_exit)
        try:
            with super().capture_signals():
                yield
        finally:
            signal.signal(signal.SIGHUP, before)
        if signal.SIGHUP in self._captured_signals:
            # uvicorn raised it again while ours was installed: now for the one before
            signal.raise_signal(signal.SIGHUP)


def _disarm_abort_timer() -> None:
    """Cancel the SIGABRT a native failure handler armed on the stop signal.

    A process that joined Ray (the ``ray`` provider) gets SIGTERM through abseil's
    failure-signal handler before ours, and it arms a 3 s alarm that aborts the process
    (ray-project/ray#64830): a stop that closes sessions for longer would end in a core
    dump with the sessions' actors left to Ray. Nothing else here uses the alarm. Runs
    in the main thread, as Python's signal handlers do.
    """
    if threading.current_thread() is threading.main_thread():
        signal.alarm(0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


def check_isolation(settings: ServerSettings) -> dict[str, Any]:
    """What isolates the sessions here (see docs/server.md, "Threat model"); logs what
    is missing, and raises :class:`IsolationUnavailableError` when it is required."""
    from viewfinder.codeenv.worker.isolation import probe

    config = settings.codeenv
    if not config.isolation:
        report: dict[str, Any] = {
            "enabled": False,
            "missing": ["files", "processes", "network"],
            "reason": "isolation is turned off",
        }
    else:
        found = probe()
        report = {
            "enabled": found["available"],
            "missing": found["missing"],
            "reason": found["reason"],
        }
    report["network"] = config.session_network if report["enabled"] else "host"
    if report["missing"]:
        message = (
            f"sessions are not isolated from each other ({', '.join(report['missing'])}): "
            f"{report['reason']}"
        )
        if config.require_isolation:
            raise IsolationUnavailableError(message)
        log.warning("%s; run untrusted code only in a container or VM of its own", message)
    return report


def open_session_provider(settings: ServerSettings, spec: Any) -> SessionProvider:
    """The provider ``settings.provider`` names, running sessions of ``spec``; its
    errors (unknown name, unreachable cluster) are logged in one line and raised."""
    try:
        return open_provider(settings.provider, spec, **settings.provider_settings())
    except ProviderError as exc:
        log.error("cannot start the %r session provider: %s", settings.provider, exc)
        raise


def cancel_steps(app: Any) -> None:
    """Cancel the running steps of ``app``'s sessions (when it has started)."""
    registry = getattr(getattr(app, "state", None), "registry", None)
    if registry is not None:
        registry.cancel_all(SHUTTING_DOWN)


def create_app(
    settings: ServerSettings | None = None, provider: SessionProvider | None = None
) -> FastAPI:
    """The server app, serving ``settings.env`` (whichever environment a plugin
    registered under that name: ``code``, ``desktop``, a third party's). Its
    lifespan owns the session provider (``provider``, opened already by the caller,
    or opened at start-up) and the session registry
    (``app.state.provider``, ``app.state.registry``, and ``app.state.served``, the
    environment); every session is closed and the provider stopped when it ends. Every
    route sits behind :class:`~viewfinder.core.web_access.WebGuard` (Host, Origin, JSON
    bodies, framing, the token)."""
    settings = settings or ServerSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(reap_leftovers)
        app.state.isolation = check_isolation(settings)
        sessions: SessionProvider = (
            provider
            if provider is not None
            else await asyncio.to_thread(open_session_provider, settings, served.spec())
        )
        registry = SessionRegistry(settings, sessions)
        app.state.provider, app.state.registry, app.state.served = sessions, registry, served
        # Load the plugins now, not on the first capture of the first session.
        await asyncio.to_thread(get_plugin_manager)
        shared_font_cache()
        registry.start_reaper()
        try:
            yield
        finally:
            await registry.stop_reaper()
            await registry.close_all(SHUTTING_DOWN)
            await asyncio.to_thread(sessions.close)

    # the env is made now, so that an unknown --env fails before anything starts
    served = served_env(settings)
    described = served.metadata()
    app = FastAPI(
        title=f"viewfinder {served.name} env",
        summary=described.get("description") or None,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.include_router(info.router)
    for router in env_routers(served):
        app.include_router(router)
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

    @app.exception_handler(SessionLostError)
    async def session_lost(_: Request, exc: SessionLostError) -> JSONResponse:
        return JSONResponse(
            status_code=503,
            content={"detail": {"code": wire.SESSION_LOST, "message": str(exc), "node": exc.node}},
        )

    return guard(app, server_access(settings))
