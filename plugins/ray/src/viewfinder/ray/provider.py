"""The ``ray`` session provider: each session a Ray actor on a node with a free display slot.

Placement is Ray's: every session actor asks for one unit of the custom resource
``viewfinder_display`` (and no CPU), so a node takes as many sessions as the slots it
was started with (``ray start --resources='{"viewfinder_display": 8}'``), and the
``SPREAD`` strategy spreads them over the nodes. Calls are actor method calls; results
travel through Ray's object store (large ones zero-copy), packed by the env's codec.

A session whose actor or node dies fails with :class:`SessionLostError` naming the
node; the provider's other sessions go on, and new ones go to the nodes alive.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from viewfinder.core.providers import (
    EnvSpec,
    NoFreeSlotError,
    ProviderError,
    ResultCodec,
    SessionLostError,
)

if TYPE_CHECKING:
    from ray.actor import ActorHandle

log = logging.getLogger(__name__)

#: The custom resource a node has one unit of per session it may run.
RESOURCE = "viewfinder_display"
#: Ray reads these when it is imported: keep Ray on loopback for a loopback address, and
#: send no usage statistics unless the operator asked for them.
_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_USAGE_STATS_ENV = "RAY_USAGE_STATS_ENABLED"
#: Concurrent calls into one session actor: a call, a cancel and a close at once.
ACTOR_CONCURRENCY = 4


def _is_loopback(address: str | None) -> bool:
    """Whether ``address`` is on this machine's loopback (None: a Ray started here)."""
    if address is None:
        return True
    host = address.removeprefix("ray://").rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "::1") or host.startswith("127.")


def _import_ray(address: str | None) -> Any:
    import sys

    if "ray" not in sys.modules:
        os.environ.setdefault(_USAGE_STATS_ENV, "0")
        if _is_loopback(address):
            # Ray rewrites a loopback address to this machine's public one unless told
            # that this is a single-machine cluster; a cluster on 127.0.0.1 is one.
            os.environ.setdefault(_LOOPBACK_ENV, "0")
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - ray is a dependency of this plugin
        raise ProviderError(
            f"the ray provider needs Ray: pip install viewfinder-ray ({exc})"
        ) from exc
    return ray


class RaySession:
    """One session: its actor, and the node it runs on (see :class:`ProvidedSession`)."""

    def __init__(
        self,
        provider: RayProvider,
        session_id: str,
        actor: ActorHandle,
        where: dict[str, Any],
        codec: ResultCodec | None,
    ) -> None:
        self.id = session_id
        #: The Ray node id (hex) of the node the actor runs on.
        self.node: str = where["node"]
        #: That node's address, and the actor's process id there.
        self.address: str = where["address"]
        self.pid: int = where["pid"]
        self._provider = provider
        self._actor = actor
        self._codec = codec
        self._running = 0
        self._lock = threading.Lock()
        self._closed = False
        self._lost: SessionLostError | None = None

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """``env.name(*args, **kwargs)`` in the actor, and its result here."""
        ray = self._provider.ray
        if self._lost is not None:
            raise self._lost
        if self._closed:
            raise ProviderError(f"session {self.id} is closed")
        with self._lock:
            self._running += 1
        try:
            packed = ray.get(self._actor.call.remote(name, args, kwargs))
        except ray.exceptions.RayTaskError as exc:  # the env raised: raise it here
            raise exc.cause from None
        except ray.exceptions.RayActorError as exc:
            self._lost = self._provider.lost(self, exc)
            raise self._lost from None
        finally:
            with self._lock:
                self._running -= 1
        return self._codec.unpack(packed) if self._codec is not None else packed

    def cancel(self, reason: str) -> bool:
        """Ask the actor to stop the running call; returns at once."""
        if self._closed or self._lost is not None:
            return False
        try:
            self._actor.cancel.remote(reason)
        except Exception:  # the actor is gone: nothing runs there to stop
            log.debug("session %s: cancel not delivered", self.id, exc_info=True)
        return self._running > 0

    def close(self) -> None:
        """Close the env in the actor (up to the provider's close timeout), then end the
        actor, whatever happened."""
        if self._closed:
            return
        self._closed = True
        ray = self._provider.ray
        try:
            if self._lost is None:
                ray.get(self._actor.close.remote(), timeout=self._provider.close_timeout_s)
        except Exception as exc:  # a dead node, a hung close: the kill below ends it
            log.warning("session %s: its env did not close cleanly: %s", self.id, exc)
        finally:
            try:
                ray.kill(self._actor, no_restart=True)
            except Exception:  # gone already
                log.debug("session %s: actor already gone", self.id, exc_info=True)
            self._provider.forget(self)

    def __repr__(self) -> str:
        return f"<RaySession {self.id[:8]} node={self.node[:12]} pid={self.pid}>"


class RayProvider:
    """Runs sessions of ``spec`` as Ray actors (the ``ray`` provider).

    - ``address``: the cluster to join (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:10001"``);
      None starts a Ray instance on this machine with ``slots`` display slots. When this
      process is connected to Ray already, that connection is used and ``address`` is
      ignored.
    - ``slots``: display slots of a Ray instance started here (default: 16).
    - ``start_timeout_s``: how long a new session may wait for its actor to start.
    - ``close_timeout_s``: how long a session's env may take to close before its actor
      is killed.
    - ``init_options``: more keyword arguments for ``ray.init``.
    """

    name = "ray"

    def __init__(
        self,
        spec: EnvSpec,
        *,
        address: str | None = None,
        slots: int | None = None,
        resource: str = RESOURCE,
        start_timeout_s: float = 120.0,
        close_timeout_s: float = 30.0,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if slots is not None and slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        if start_timeout_s <= 0 or close_timeout_s <= 0:
            raise ValueError("start_timeout_s and close_timeout_s must be positive")
        self.spec = spec
        self.resource = resource
        self.start_timeout_s = start_timeout_s
        self.close_timeout_s = close_timeout_s
        self.ray = _import_ray(address)
        self._codec = spec.result_codec()
        self._lock = threading.Lock()
        self._sessions: dict[str, RaySession] = {}
        self._opening = 0
        self._closed = False
        self._owns_connection = not self.ray.is_initialized()
        if self._owns_connection:
            self._connect(address, slots, init_options or {})
        self._actor_class = self.ray.remote(_actor_class())

    def _connect(self, address: str | None, slots: int | None, options: dict[str, Any]) -> None:
        settings: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.WARNING,
        }
        if address is None:  # a Ray of our own on this machine: its slots are ours
            settings.update(
                resources={self.resource: slots or 16},
                object_store_memory=200 * 1024 * 1024,
                _node_ip_address="127.0.0.1",
            )
        else:
            settings["address"] = address
        settings.update(options)
        try:
            self.ray.init(**settings)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ProviderError(
                f"cannot connect to the Ray cluster at {address!r}: {exc}. Start one with "
                "`ray start --head --resources='{\"viewfinder_display\": 8}'` (see "
                "docs/scale.md), or give its address (--ray-address)"
            ) from exc

    # -- sessions --------------------------------------------------------------------------

    def open(self, session_id: str) -> RaySession:
        """A session actor on a node with a free slot; :class:`NoFreeSlotError` when the
        cluster has none."""
        with self._lock:
            if self._closed:
                raise ProviderError("the ray provider is closed")
            free = self._free_slots_locked()
            if free < 1:
                running = len(self._sessions)
                raise NoFreeSlotError(
                    f"the Ray cluster has no free display slot ({running} sessions run on "
                    f"its {self._slots_alive()} slots); close a session or add a node "
                    f"with `ray start --resources='{{\"{self.resource}\": N}}'`",
                    running=running,
                    slots=running,
                )
            self._opening += 1
        try:
            session = self._start(session_id)
        finally:
            with self._lock:
                self._opening -= 1
        with self._lock:
            self._sessions[session_id] = session
        return session

    def _start(self, session_id: str) -> RaySession:
        ray = self.ray
        actor = self._actor_class.options(
            num_cpus=0,
            resources={self.resource: 1},
            max_concurrency=ACTOR_CONCURRENCY,
            max_restarts=0,
            scheduling_strategy="SPREAD",
        ).remote(self.spec, session_id)
        ready = actor.ready.remote()
        done, _ = ray.wait([ready], timeout=self.start_timeout_s)
        if not done:
            ray.kill(actor, no_restart=True)
            raise NoFreeSlotError(
                f"no session actor could start within {self.start_timeout_s:g} s: every "
                "display slot of the cluster is taken (by other users too?)",
                running=len(self._sessions),
            )
        try:
            where = ray.get(ready)
        except ray.exceptions.RayError as exc:
            ray.kill(actor, no_restart=True)
            cause = getattr(exc, "cause", None) or exc
            raise ProviderError(f"session {session_id} could not start: {cause}") from None
        return RaySession(self, session_id, actor, where, self._codec)

    def forget(self, session: RaySession) -> None:
        """Drop a closed session from the books (its slot is free again)."""
        with self._lock:
            if self._sessions.get(session.id) is session:
                del self._sessions[session.id]

    def lost(self, session: RaySession, error: Exception) -> SessionLostError:
        """The error a session whose actor died fails with, naming its node."""
        node = f"{session.node} ({session.address})"
        try:
            alive = self._alive_nodes()
        except ProviderError as exc:
            return SessionLostError(session.id, node, f"its actor died and {exc}")
        if session.node not in alive:
            reason = "its node died"
        else:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
            reason = f"its actor died ({first_line or type(error).__name__})"
        log.warning("session %s lost on node %s: %s", session.id, node, reason)
        return SessionLostError(session.id, node, reason)

    def sessions(self) -> list[RaySession]:
        with self._lock:
            return list(self._sessions.values())

    # -- capacity --------------------------------------------------------------------------

    def _alive_nodes(self) -> dict[str, dict[str, Any]]:
        try:
            nodes = self.ray.nodes()
        except Exception as exc:  # the head (its GCS) is gone or unreachable
            raise ProviderError(f"the Ray cluster cannot be reached: {exc}") from exc
        return {node["NodeID"]: node for node in nodes if node.get("Alive")}

    def _slots_alive(self) -> int:
        return int(
            sum(node["Resources"].get(self.resource, 0) for node in self._alive_nodes().values())
        )

    def _free_slots_locked(self) -> int:
        alive = self._alive_nodes()
        slots = sum(node["Resources"].get(self.resource, 0) for node in alive.values())
        ours = sum(1 for s in self._sessions.values() if s.node in alive) + self._opening
        return max(0, int(slots) - ours)

    def free_slots(self) -> int:
        """The display slots of the alive nodes less the sessions this provider runs there."""
        with self._lock:
            return self._free_slots_locked()

    def stats(self) -> dict[str, Any]:
        """Nodes with their slots and this provider's sessions on each."""
        alive = self._alive_nodes()
        sessions = self.sessions()
        nodes = []
        for node_id, node in alive.items():
            slots = int(node["Resources"].get(self.resource, 0))
            if not slots:
                continue
            nodes.append(
                {
                    "node": node_id,
                    "address": node.get("NodeManagerAddress"),
                    "slots": slots,
                    "sessions": sum(1 for s in sessions if s.node == node_id),
                }
            )
        return {
            "name": self.name,
            "resource": self.resource,
            "free_slots": self.free_slots(),
            "nodes": nodes,
        }

    # -- the end ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close every session (their envs first, in parallel), then leave Ray if this
        provider connected to it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        threads = [
            threading.Thread(target=session.close, name=f"close-{session.id[:8]}")
            for session in self.sessions()
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(self.close_timeout_s + 10)
        if self._owns_connection and self.ray.is_initialized():
            self.ray.shutdown()


def _actor_class() -> type:
    from viewfinder.ray.actor import SessionActor

    return SessionActor
