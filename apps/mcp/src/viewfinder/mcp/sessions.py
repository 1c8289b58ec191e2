"""The sessions of one ``viewfinder mcp`` server, by key.

Over stdio the process serves one client: one session, closed when stdin closes or a
signal stops the server. Over streamable HTTP the key is the MCP session id the SDK
gives each client at ``initialize`` (the ``Mcp-Session-Id`` header of its requests);
a session ends when its client sends ``DELETE`` (what an SDK client does when it
disconnects), when it had no request in flight for the idle timeout (a client that
went away without a word), or when the server stops.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from viewfinder.mcp.options import DesktopOptions
from viewfinder.mcp.session import McpSession

log = logging.getLogger(__name__)


@dataclass
class _Activity:
    in_flight: int = 0
    last: float = 0.0


class SessionRegistry:
    """Sessions made on first use of their key, and closed by key, when idle, or all.

    Used from the server's event loop only (no locks); closing runs off the loop.
    """

    def __init__(self, options: DesktopOptions) -> None:
        self.options = options
        self._sessions: dict[str, McpSession] = {}
        self._activity: dict[str, _Activity] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, key: str) -> McpSession:
        """The session of ``key``, made now if it has none."""
        session = self._sessions.get(key)
        if session is None or session.closed:
            session = McpSession(self.options, key)
            self._sessions[key] = session
            log.info("session %s opened", key)
        return session

    def find(self, key: str) -> McpSession | None:
        """The session of ``key``, or None."""
        return self._sessions.get(key)

    async def close(self, key: str) -> bool:
        """Close the session of ``key`` and what it started; False when it had none."""
        self._activity.pop(key, None)
        session = self._sessions.pop(key, None)
        if session is None:
            return False
        await session.aclose()
        log.info("session %s closed", key)
        return True

    async def close_all(self) -> int:
        """Close every session at once (in parallel: a server stop must be quick)."""
        keys = list(self._sessions)
        results = await asyncio.gather(*(self.close(key) for key in keys))
        return sum(results)

    # -- activity, for the HTTP transport's idle timeout -----------------------------------

    def begin(self, key: str) -> None:
        """A request of session ``key`` started."""
        activity = self._activity.setdefault(key, _Activity())
        activity.in_flight += 1

    def end(self, key: str) -> None:
        """A request of session ``key`` ended."""
        activity = self._activity.get(key)
        if activity is None:
            return
        activity.in_flight -= 1
        activity.last = time.monotonic()
        if activity.in_flight <= 0 and key not in self._sessions:
            del self._activity[key]  # no session to time out: nothing to remember

    async def close_idle(self, idle_timeout: float) -> int:
        """Close the sessions with no request in flight for ``idle_timeout`` seconds."""
        now = time.monotonic()
        idle = []
        for key, session in self._sessions.items():
            activity = self._activity.get(key)
            last = activity.last if activity is not None else session.created
            if (activity is None or activity.in_flight <= 0) and now - last > idle_timeout:
                idle.append(key)
        for key in idle:
            log.info("session %s idle for %g s: closing it", key, idle_timeout)
            await self.close(key)
        return len(idle)
