"""The sessions a server runs: each one an environment (a code env or a desktop) that
the server's session provider runs (here, or on a Ray cluster)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from viewfinder.core.providers import NoFreeSlotError, SessionLostError, SessionProvider
from viewfinder.server.errors import CapacityReachedError
from viewfinder.server.provided import ProvidedEnv
from viewfinder.server.settings import ServerSettings

log = logging.getLogger(__name__)
T = TypeVar("T")

#: How often the reaper asks the provider whether its cluster is gone, in seconds.
CLUSTER_CHECK_EVERY_S = 1.0


class Session:
    """One client's environment, with when it was last used."""

    def __init__(self, session_id: str, env: Any, kind: str) -> None:
        self.id = session_id
        #: The environment (a :class:`~viewfinder.server.provided.ProvidedEnv`).
        self.env = env
        #: "ws", "http" (one request) or "mcp" (made by ``openenv/session/create``).
        self.kind = kind
        self.created_at = time.time()
        self.last_active = time.monotonic()
        self.busy = 0
        #: Called (once) when the server closes the session on its own (idle, shutdown).
        self.on_server_close: Callable[[str], Awaitable[None]] | None = None
        #: Why the session cannot go on, once its node or process died (SESSION_LOST).
        self.lost: SessionLostError | None = None
        #: Why the server closed the session on its own (idle, shutdown), set before its
        #: environment is closed: a request that arrives meanwhile gets this reason.
        self.closed_by_server: str | None = None
        #: Called (once) when the session is lost without a request of its client (the
        #: cluster's head is gone): it tells the client, SESSION_LOST and a close frame.
        self.on_lost: Callable[[SessionLostError], Awaitable[None]] | None = None

    def touch(self) -> None:
        self.last_active = time.monotonic()

    def idle_for(self) -> float:
        return 0.0 if self.busy else time.monotonic() - self.last_active


class SessionRegistry:
    """Opens sessions up to the cap, runs their blocking work off the event loop, reaps idle ones.

    Environment calls block (a step waits for its worker, or its actor), so they run on
    a thread pool sized for every session to step at once. Each session's environment
    comes from ``provider`` (see :mod:`viewfinder.core.providers`): the registry does
    not know where it runs.
    """

    def __init__(self, settings: ServerSettings, provider: SessionProvider) -> None:
        self.settings = settings
        self.provider = provider
        self._sessions: dict[str, Session] = {}
        self._opening = 0
        self._lock = asyncio.Lock()
        self._executor = ThreadPoolExecutor(
            max_workers=settings.max_sessions + 4, thread_name_prefix="viewfinder-session"
        )
        self._reaper: asyncio.Task[None] | None = None
        self._next_reap = 0.0
        self.reaped = 0
        #: Sessions failed with SESSION_LOST (their node or process died).
        self.lost = 0
        #: Why the server should stop, once its cluster's head is gone and the settings
        #: say ``on_head_lost="exit"`` (the server's loop reads it, see app.py).
        self.stop_reason: str | None = None

    # -- facts --------------------------------------------------------------------------

    @property
    def active(self) -> int:
        return len(self._sessions)

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    def sessions(self) -> list[Session]:
        return list(self._sessions.values())

    # -- running blocking work ------------------------------------------------------------

    async def call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a blocking call on the session thread pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: function(*args, **kwargs))

    async def use(self, session: Session, function: Callable[..., T], *args: Any) -> T:
        """Run ``function`` for ``session``; it counts as active meanwhile."""
        session.busy += 1
        try:
            return await self.call(function, *args)
        finally:
            session.busy -= 1
            session.touch()

    # -- opening and closing --------------------------------------------------------------

    async def open(self, kind: str) -> Session:
        """A new session, or :class:`CapacityReachedError` when all slots are taken (the
        server's ``max_sessions``, or the provider's free slots)."""
        async with self._lock:
            taken = len(self._sessions) + self._opening
            if taken >= self.settings.max_sessions:
                raise CapacityReachedError(taken, self.settings.max_sessions)
            self._opening += 1
        session_id = uuid.uuid4().hex
        # a cluster session starts an actor somewhere: off the event loop
        opening = asyncio.get_running_loop().run_in_executor(
            self._executor, self.provider.open, session_id
        )
        try:
            provided = await asyncio.shield(opening)
        except asyncio.CancelledError:  # the client left while its session was starting
            opening.add_done_callback(_discard_opened)
            raise
        except NoFreeSlotError as exc:  # the provider's slots are all taken
            # the sessions open and opening (a burst of opens counts), not this one
            taken = len(self._sessions) + self._opening - 1
            maximum = min(self.settings.max_sessions, exc.slots) if exc.slots else taken
            raise CapacityReachedError(taken, maximum, message=str(exc)) from None
        finally:
            self._opening -= 1
        session = Session(session_id, ProvidedEnv(provided), kind)
        self._sessions[session_id] = session
        return session

    async def close(self, session: Session) -> None:
        """Close ``session`` (idempotent): its worker is killed, its display goes back."""
        async with self._lock:
            if self._sessions.pop(session.id, None) is None:
                return
        await self.call(session.env.close)

    @contextlib.asynccontextmanager
    async def one_shot(self) -> AsyncIterator[Session]:
        """A session for one HTTP request (OpenEnv's HTTP endpoints are stateless)."""
        session = await self.open("http")
        try:
            yield session
        finally:
            await self.close(session)

    def cancel_all(self, reason: str) -> int:
        """Cancel every running step now (safe from a signal handler or any thread);
        return how many were running."""
        return sum(session.env.cancel(reason) for session in self.sessions())

    async def lose(self, session: Session, error: SessionLostError) -> None:
        """Drop a session whose node or process died (SESSION_LOST): its slot is free,
        and ``session.lost`` says why."""
        session.lost = error
        if session.id in self._sessions:
            self.lost += 1
            log.warning("%s", error)
        await self.close(session)

    async def lose_all_if_the_cluster_is_gone(self) -> int:
        """When the provider's cluster is gone (its head does not answer), every session
        is lost: each client hears SESSION_LOST with the reason, and a close frame; the
        server itself goes on. Returns how many were lost."""
        head_lost = getattr(self.provider, "head_lost", None)
        reason = head_lost() if callable(head_lost) else None
        if reason is None:
            return 0
        sessions = self.sessions()
        for session in sessions:
            error = SessionLostError(session.id, getattr(session.env, "node", None), reason)
            session.lost = error
            notify, session.on_lost = session.on_lost, None
            if notify is not None:
                with contextlib.suppress(Exception):  # the client may be gone already
                    await notify(error)
        # their actors cannot be reached to be closed: the books are cleared, and the
        # closes go on in the pool for as long as they take
        for session in sessions:
            if self._sessions.pop(session.id, None) is not None:
                self.lost += 1
                asyncio.get_running_loop().run_in_executor(self._executor, session.env.close)
        if sessions:
            log.warning("%d sessions lost: %s", len(sessions), reason)
        if self.settings.on_head_lost == "exit":
            self.stop_reason = reason
        return len(sessions)

    async def close_all(self, reason: str) -> None:
        """Close every session, in parallel (a cluster session's close is a round trip),
        then stop the thread pool."""
        await asyncio.gather(
            *(self._close_by_server(session, reason) for session in self.sessions()),
            return_exceptions=True,
        )
        head_lost = getattr(self.provider, "head_lost", None)
        # a call into a cluster whose head is gone may never return: not waited for
        self._executor.shutdown(wait=not (callable(head_lost) and head_lost()))

    async def _close_by_server(self, session: Session, reason: str) -> None:
        notify, session.on_server_close = session.on_server_close, None
        session.closed_by_server = reason
        await self.close(session)  # kills the worker: a step still running returns at once
        if notify is not None:
            with contextlib.suppress(Exception):  # the client may be gone already
                await notify(reason)

    # -- the idle reaper --------------------------------------------------------------------

    def start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap_forever(), name="viewfinder-reaper")

    async def stop_reaper(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None

    async def reap_idle(self) -> int:
        """Close the sessions idle for longer than the timeout; return how many."""
        limit = self.settings.idle_timeout_s
        idle = [session for session in self.sessions() if session.idle_for() > limit]
        for session in idle:
            log.info("closing session %s: idle for over %g s", session.id, limit)
            await self._close_by_server(
                session, f"the session was idle for over {limit:g} s and was closed"
            )
        self.reaped += len(idle)
        return len(idle)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(min(self.settings.reap_every_s, CLUSTER_CHECK_EVERY_S))
            try:
                await self.lose_all_if_the_cluster_is_gone()
                if time.monotonic() >= self._next_reap:
                    self._next_reap = time.monotonic() + self.settings.reap_every_s
                    await self.reap_idle()
            except Exception:  # keep reaping; one bad close must not stop it
                log.exception("the idle-session reaper failed; it keeps running")


def _discard_opened(opened: asyncio.Future[Any]) -> None:
    """Close a session that finished opening after its client left (off the loop)."""
    if opened.cancelled() or opened.exception() is not None:
        return
    threading.Thread(
        target=opened.result().close, name="viewfinder-discard-session", daemon=True
    ).start()
