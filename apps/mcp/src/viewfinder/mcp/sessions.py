"""The sessions of one ``viewfinder mcp`` server, by key.

Over stdio the process serves one client: one session, closed when stdin closes or a
signal stops the server. Over streamable HTTP the key is the MCP session id the SDK
gives each client at ``initialize`` (the ``Mcp-Session-Id`` header of its requests);
a session ends when its client sends ``DELETE`` (what an SDK client does when it
disconnects), when it had no request in flight for the idle timeout (a client that
went away without a word), or when the server stops.

Over HTTP, sessions are strangers to each other: each writes its files (recordings,
cache files) in a folder of its own under ``--workdir``, named by a random value that
has nothing to do with its session id (the id is the session's only credential on
loopback: a folder name is no place for it), and open to the server's user alone (mode
0700), so neither another session's tools (paths stay inside the session's folder) nor
its sandbox (another user id, as root) can read them. The workdir itself is made the
server's user's alone (0700) as well, so no sandbox can even list the folders.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from viewfinder.mcp.options import DesktopOptions, McpOptionError
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

    def __init__(self, options: DesktopOptions, *, folder_per_session: bool = False) -> None:
        self.options = options
        self.folder_per_session = folder_per_session
        if folder_per_session or os.geteuid() == 0:
            private_workdir(options.workdir)
        self._sessions: dict[str, McpSession] = {}
        #: Each session's folder name, random (see the module docstring).
        self._folders: dict[str, str] = {}
        self._activity: dict[str, _Activity] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, key: str) -> McpSession:
        """The session of ``key``, made now if it has none."""
        session = self._sessions.get(key)
        if session is None or session.closed:
            workdir = self.session_folder(key) if self.folder_per_session else None
            session = McpSession(self.options, key, workdir)
            self._sessions[key] = session
            log.info("session %s opened", key)
        return session

    def session_folder(self, key: str) -> Path:
        """The folder of session ``key`` under the workdir, made for the server's user
        alone (0700) if it is not there; its name is random, the same for ``key`` while
        this server runs."""
        name = self._folders.get(key)
        if name is None:
            name = self._folders[key] = f"session-{secrets.token_hex(16)}"
        folder = self.options.workdir / name
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)  # whatever the umask, or an older folder of the name
        return folder

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


def private_workdir(folder: Path) -> None:
    """Make ``folder`` (the workdir) the server's user's alone: owned by it, mode 0700,
    so that code in a sandbox (another user id) cannot list or read what is in it.

    Raises :class:`McpOptionError` when it belongs to another user (handing it over
    would take it from its owner) or cannot be made.
    """
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        owner = folder.stat().st_uid
        if owner != os.geteuid():
            raise McpOptionError(
                "--workdir",
                f"{folder} belongs to user id {owner}, not to the server's user "
                f"({os.geteuid()}); give a folder of the server's user's own",
            )
        os.chmod(folder, 0o700)
    except OSError as exc:
        raise McpOptionError("--workdir", f"{folder} cannot be made private: {exc}") from None
