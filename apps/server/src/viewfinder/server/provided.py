"""What the server's sessions run, for any session provider.

The server describes a session with an :class:`~viewfinder.core.EnvSpec`: the import
path of the served env's factory and its picklable settings
(:meth:`~viewfinder.server.served.ServedEnv.spec`). A provider
builds it where the session runs (this process for ``local``, a Ray actor for ``ray``),
and the registry holds a :class:`ProvidedEnv`, which offers the env's methods and
forwards them to the provider's session: the routes cannot tell where it runs.
:data:`RESULTS` packs results for the trip between processes (screenshots as bytes).
"""

from __future__ import annotations

import base64
import logging
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from viewfinder.core.providers import EnvSpec, ProvidedSession

if TYPE_CHECKING:
    from viewfinder.codeenv.displays import DisplaySource
    from viewfinder.server.settings import ServerSettings

log = logging.getLogger(__name__)


def reap_leftovers() -> None:
    """Remove what a process that died without stopping (a SIGKILLed server, a session
    actor whose node went down) left on this machine: its displays and their folders,
    the processes and files of its sessions' user ids (daemons, homes)."""
    from viewfinder.codeenv.sandbox_users import shared_users
    from viewfinder.codeenv.session_space import sweep_abandoned
    from viewfinder.xvfb.reaping import reaping
    from viewfinder.xvfb.server import reap_abandoned

    with reaping() as turn:  # one clean-up at a time on the machine
        if not turn:
            log.warning("another clean-up of what killed servers left took too long; skipped")
            return
        displays = reap_abandoned()
        users = shared_users().reap_abandoned() if os.geteuid() == 0 else {}
        sweep_abandoned()  # the session spaces (homes, temporary folders) it left mounted
    if displays or users:
        log.warning(
            "removed what an earlier server left: %d display(s), %d session user id(s) "
            "(%d process(es))",
            len(displays),
            len(users),
            sum(users.values()),
        )


_reaped = threading.Event()


def own_process_ready(displays: DisplaySource | None) -> None:
    """Call from an env factory before building the session's env."""
    # A session given no displays runs in a process of its own (a Ray actor): the first
    # one there cleans up after sessions of that machine whose process was killed.
    if displays is None and not _reaped.is_set():
        _reaped.set()
        reap_leftovers()


# -- results between processes (EnvSpec.codec) ----------------------------------------------


@dataclass(frozen=True)
class PackedObservation:
    """A code env observation with its captures as PNG bytes instead of base64."""

    observation: Any
    screenshots: list[bytes]
    #: The index of ``screenshot`` in ``screenshots``; -1: it is None; -2: it is ``extra``.
    last: int
    extra: bytes | None = None


class ResultCodec:
    """Packs the observations of code env and desktop sessions: every capture as bytes
    (a third smaller than base64, and sent by Ray's object store without a copy)."""

    def pack(self, value: Any) -> Any:
        from viewfinder.codeenv import CodeObservation
        from viewfinder.server.mcp_wire import CallToolObservation

        if isinstance(value, CodeObservation) and (value.screenshots or value.screenshot):
            shots = [base64.b64decode(shot) for shot in value.screenshots]
            last, extra = -1, None
            if value.screenshot is not None:
                if value.screenshots and value.screenshot == value.screenshots[-1]:
                    last = len(shots) - 1
                else:
                    last, extra = -2, base64.b64decode(value.screenshot)
            bare = value.model_copy(update={"screenshots": [], "screenshot": None})
            return PackedObservation(bare, shots, last, extra)
        if isinstance(value, CallToolObservation) and value.result:
            content = value.result.get("content")
            if isinstance(content, list) and any(_is_image(part) for part in content):
                parts = [
                    {**part, "data": base64.b64decode(part["data"])} if _is_image(part) else part
                    for part in content
                ]
                return value.model_copy(update={"result": {**value.result, "content": parts}})
        return value

    def unpack(self, value: Any) -> Any:
        from viewfinder.server.mcp_wire import CallToolObservation

        if isinstance(value, PackedObservation):
            shots = [base64.b64encode(shot).decode("ascii") for shot in value.screenshots]
            if value.last >= 0:
                screenshot: str | None = shots[value.last]
            elif value.last == -2 and value.extra is not None:
                screenshot = base64.b64encode(value.extra).decode("ascii")
            else:
                screenshot = None
            return value.observation.model_copy(
                update={"screenshots": shots, "screenshot": screenshot}
            )
        if isinstance(value, CallToolObservation) and value.result:
            content = value.result.get("content")
            if isinstance(content, list) and any(
                isinstance(part, dict) and isinstance(part.get("data"), bytes) for part in content
            ):
                parts = [
                    {**part, "data": base64.b64encode(part["data"]).decode("ascii")}
                    if isinstance(part, dict) and isinstance(part.get("data"), bytes)
                    else part
                    for part in content
                ]
                return value.model_copy(update={"result": {**value.result, "content": parts}})
        return value


def _is_image(part: Any) -> bool:
    return (
        isinstance(part, dict) and part.get("type") == "image" and isinstance(part.get("data"), str)
    )


#: The codec of the server's sessions, and its import path (an ``EnvSpec.codec``).
RESULTS = ResultCodec()
RESULTS_PATH = f"{__name__}:RESULTS"


def env_spec(settings: ServerSettings) -> EnvSpec:
    """What each session of a server with ``settings`` runs: the spec of the env it
    serves (:func:`~viewfinder.server.served.served_env`)."""
    from viewfinder.server.served import served_env

    return served_env(settings).spec()


# -- the env the routes see ------------------------------------------------------------------


class ProvidedEnv:
    """A provided session with the env's own methods (those the routes and pools call),
    each forwarded to where the session runs."""

    def __init__(self, session: ProvidedSession) -> None:
        self.session = session

    @property
    def node(self) -> str:
        """Where the session runs (``"local"``, or a cluster node's id)."""
        return self.session.node

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        return self.session.call("reset", *args, **kwargs)

    def step(self, *args: Any, **kwargs: Any) -> Any:
        return self.session.call("step", *args, **kwargs)

    def call_tool(self, *args: Any, **kwargs: Any) -> Any:
        return self.session.call("call_tool", *args, **kwargs)

    @property
    def state(self) -> Any:
        return self.session.call("state")

    def cancel(self, reason: str = "cancelled by the client") -> bool:
        return self.session.cancel(reason)

    def close(self) -> None:
        self.session.close()

    def __repr__(self) -> str:
        return f"<ProvidedEnv {self.session.id[:8]} on {self.session.node}>"
