"""The ``local`` session provider: sessions in this process, on a pool of warm displays.

Each session's env is built here (its worker processes are children of this process)
and takes its display from the provider's :class:`~viewfinder.xvfb.DisplayPool`. This
is what ``viewfinder serve`` does by default.
"""

from __future__ import annotations

import threading
from typing import Any

from viewfinder.core.providers import EnvSpec, NoFreeSlotError, ProviderError


class LocalSession:
    """One session's env, in this process (see :class:`~viewfinder.core.ProvidedSession`)."""

    node = "local"

    def __init__(self, provider: LocalProvider, session_id: str, env: Any) -> None:
        self.id = session_id
        self.env = env
        self._provider = provider
        self._closed = False

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """``env.name(*args, **kwargs)``, or the value of the attribute ``name``."""
        if name.startswith("_"):
            raise AttributeError(f"{name!r} is private to the env; call its public methods")
        attribute = getattr(self.env, name)
        if callable(attribute):
            return attribute(*args, **kwargs)
        if args or kwargs:
            raise TypeError(f"{name!r} is an attribute of the env, not a method: pass nothing")
        return attribute

    def cancel(self, reason: str) -> bool:
        cancel = getattr(self.env, "cancel", None)
        return bool(cancel(reason)) if callable(cancel) else False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            close = getattr(self.env, "close", None)
            if callable(close):
                close()
        finally:
            self._provider.forget(self)

    def __repr__(self) -> str:
        return f"<LocalSession {self.id[:8]}>"


class LocalProvider:
    """Runs sessions of ``spec`` in this process (the ``local`` provider).

    - ``pool_size``: warm displays kept ready; ``width`` / ``height``: their size.
    - ``max_sessions``: sessions at once (None: no limit of its own; a server has its
      ``--max-sessions``).
    """

    name = "local"

    def __init__(
        self,
        spec: EnvSpec,
        *,
        pool_size: int = 2,
        width: int = 1280,
        height: int = 800,
        max_sessions: int | None = None,
    ) -> None:
        from viewfinder.xvfb import DisplayPool

        if max_sessions is not None and max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        self.spec = spec
        self.max_sessions = max_sessions
        self.pool = DisplayPool(size=pool_size, width=width, height=height)
        self._lock = threading.Lock()
        self._sessions: dict[str, LocalSession] = {}
        self._closed = False

    def open(self, session_id: str) -> LocalSession:
        """A session here; its env takes a display from the pool at its first reset."""
        with self._lock:
            if self._closed:
                raise ProviderError("the local provider is closed")
            running = len(self._sessions)
            if self.max_sessions is not None and running >= self.max_sessions:
                raise NoFreeSlotError(
                    f"{running} sessions run here, the most this provider allows "
                    f"({self.max_sessions}); close one first",
                    running=running,
                    slots=self.max_sessions,
                )
            # reserved before the env is built, so two opens cannot both take the last slot
            self._sessions[session_id] = session = LocalSession(self, session_id, None)
        try:
            session.env = self.spec.build(session_id, displays=self.pool)
        except BaseException:
            self.forget(session)
            raise
        return session

    def forget(self, session: LocalSession) -> None:
        with self._lock:
            if self._sessions.get(session.id) is session:
                del self._sessions[session.id]

    def free_slots(self) -> int | None:
        if self.max_sessions is None:
            return None
        with self._lock:
            return max(0, self.max_sessions - len(self._sessions))

    def stats(self) -> dict[str, Any]:
        pool = self.pool.stats()
        return {
            "name": self.name,
            "sessions": len(self._sessions),
            "displays": {"warm": pool.warm, "in_use": pool.in_use, "size": pool.size},
        }

    def close(self) -> None:
        """Close every session, then stop the pool's displays."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            sessions = list(self._sessions.values())
        try:
            for session in sessions:
                session.close()
        finally:
            self.pool.close()
