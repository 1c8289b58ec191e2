"""The ``ray`` session provider: each session a Ray actor on a node with a free display slot.

Placement is Ray's: every session reserves one unit of the custom resource
``viewfinder_display`` (and no CPU), so a node takes as many sessions as the slots it
was started with (``ray start --resources='{"viewfinder_display": 8}'``). The slot is
reserved first, as a placement group of one bundle aimed at the node with the most free
slots; a slot that is not reserved within ``placement_timeout_s`` (1.5 s) means the
cluster has none free, whoever holds them (this server, another server, a trainer's
``EnvPool``), and the session is refused (:class:`NoFreeSlotError`) instead of waiting
in Ray's queue. The session's actor then starts in that slot, taking as long as it
takes (``start_timeout_s``). Calls are actor method calls; results travel through Ray's
object store (large ones zero-copy), packed by the env's codec.

A session whose actor or node dies fails with :class:`SessionLostError` naming the
node; the provider's other sessions go on, and new ones go to the nodes alive.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from typing import Any

from viewfinder.core.providers import (
    EnvSpec,
    NoFreeSlotError,
    ProviderError,
    SessionLostError,
)
from viewfinder.ray.session import RaySession

log = logging.getLogger(__name__)

#: The custom resource a node has one unit of per session it may run.
RESOURCE = "viewfinder_display"
#: Ray reads these when it is imported: keep Ray on loopback for a loopback address, and
#: send no usage statistics unless the operator asked for them.
_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_USAGE_STATS_ENV = "RAY_USAGE_STATS_ENABLED"
#: Ray ends a driver whose head is gone for 60 s, or what this says: set over the environment's
#: value, the server outlives it (``/health`` 503 "head lost", sessions refused with the reason).
_HEAD_RECONNECT_ENV = "RAY_gcs_rpc_server_reconnect_timeout_s"
_HEAD_RECONNECT_S = str(365 * 24 * 3600)
#: Concurrent calls into one session actor: a call, a cancel and a close at once.
ACTOR_CONCURRENCY = 4
#: Without an answer from the cluster's head (its GCS) for this long, the head is gone.
HEAD_LOST_AFTER_S = 3.0
#: How often the provider asks the head whether it is there.
HEAD_CHECK_EVERY_S = 1.0
#: How long a lost session's reason waits for the head to count its node dead (a
#: raylet killed outright is seen first as a failed call, then as a dead node).
NODE_DEATH_WAIT_S = 30.0
#: How long a new session waits for a display slot to be reserved before it is refused.
PLACEMENT_TIMEOUT_S = 1.5


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
        os.environ[_HEAD_RECONNECT_ENV] = _HEAD_RECONNECT_S
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


class RayProvider:
    """Runs sessions of ``spec`` as Ray actors (the ``ray`` provider).

    - ``address``: the cluster to join (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:10001"``);
      None starts a Ray instance on this machine with ``slots`` display slots. When this
      process is connected to Ray already, that connection is used and ``address`` is
      ignored.
    - ``slots``: display slots of a Ray instance started here (default: 16).
    - ``start_timeout_s``: how long a new session's actor may take to start in its slot.
    - ``placement_timeout_s``: how long a new session waits for a free display slot
      before it is refused (:class:`NoFreeSlotError`).
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
        placement_timeout_s: float = PLACEMENT_TIMEOUT_S,
        close_timeout_s: float = 30.0,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        if slots is not None and slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        if min(start_timeout_s, placement_timeout_s, close_timeout_s) <= 0:
            raise ValueError(
                "start_timeout_s, placement_timeout_s and close_timeout_s must be positive"
            )
        self.spec = spec
        self.resource = resource
        self.start_timeout_s = start_timeout_s
        self.placement_timeout_s = placement_timeout_s
        self.close_timeout_s = close_timeout_s
        self.ray = _import_ray(address)
        self._codec = spec.result_codec()
        self._lock = threading.Lock()
        self._sessions: dict[str, RaySession] = {}
        self._opening = 0
        #: Sessions opening whose slot is not reserved yet (reserved ones are counted
        #: by the cluster's available resources).
        self._reserving = 0
        self._closed = False
        self._owns_connection = not self.ray.is_initialized()
        if self._owns_connection:
            self._connect(address, slots, init_options or {})
        self._actor_class = self.ray.remote(_actor_class())
        self._head_seen = time.monotonic()
        threading.Thread(target=self._watch_head, name="viewfinder-ray-head", daemon=True).start()

    # -- the head --------------------------------------------------------------------------

    def _watch_head(self) -> None:
        """Ask the head for its nodes every second: a call that does not come back (its
        GCS is gone) leaves :attr:`_head_seen` behind, which :meth:`head_lost` reads."""
        while not self._closed:
            try:
                self.ray.nodes()
                self._head_seen = time.monotonic()
            except Exception:  # the GCS refused or is away: _head_seen stays behind
                log.debug("the Ray head did not answer", exc_info=True)
            time.sleep(HEAD_CHECK_EVERY_S)

    def head_lost(self) -> str | None:
        """Why the cluster is gone (its head has not answered for
        :data:`HEAD_LOST_AFTER_S`), or None while it answers. Never blocks."""
        away = time.monotonic() - self._head_seen
        if away < HEAD_LOST_AFTER_S + HEAD_CHECK_EVERY_S:
            return None
        return f"the cluster's head is gone (no answer from it for {away:.0f} s)"

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
            if address.startswith("ray://") and importlib.util.find_spec("grpc") is None:
                raise ProviderError(
                    f"the Ray client address {address!r} needs Ray's client, which is not "
                    "installed: pip install 'ray[client]' (the same Ray version as the "
                    "cluster), or give the cluster's HOST:PORT from one of its machines"
                )
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
        """A session actor in a free display slot; :class:`NoFreeSlotError` when the
        cluster has none (held by anyone), within ``placement_timeout_s``."""
        # No refusal on the count alone: the cluster's count lags a slot just given
        # back by a fraction of a second, and the reservation waits for that.
        head_lost = self.head_lost()
        if head_lost is not None:
            raise ProviderError(f"{head_lost}; sessions can open once it is back")
        with self._lock:
            if self._closed:
                raise ProviderError("the ray provider is closed")
            self._opening += 1
            self._reserving += 1
        try:
            session = self._start(session_id)
        finally:
            with self._lock:
                self._opening -= 1
        with self._lock:
            self._sessions[session_id] = session
        return session

    def _no_free_slot(self, why: str, *, opening_self: bool = False) -> NoFreeSlotError:
        """The refusal, with this provider's true counts (call with the lock held):
        its sessions running and opening, not counting the one refused."""
        running = len(self._sessions) + self._opening - int(opening_self)
        return NoFreeSlotError(
            f"{why} ({running} sessions of this server run or open on its "
            f"{self._slots_alive()} slots; the others are held by other drivers or "
            f"sessions starting); close a session or add a node with "
            f"`ray start --resources='{{\"{self.resource}\": N}}'`",
            running=running,
            slots=running,
        )

    def _start(self, session_id: str) -> RaySession:
        ray = self.ray
        from ray.util.placement_group import placement_group, remove_placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        try:
            slot = placement_group(
                [{self.resource: 1}],
                strategy="STRICT_PACK",
                _soft_target_node_id=self._roomiest_node(),
            )
            reserved, _ = ray.wait([slot.ready()], timeout=self.placement_timeout_s)
        finally:
            with self._lock:
                self._reserving -= 1
        if not reserved:
            remove_placement_group(slot)
            with self._lock:
                raise self._no_free_slot(
                    f"the Ray cluster has no free display slot: none came free within "
                    f"{self.placement_timeout_s:g} s",
                    opening_self=True,
                )
        actor = self._actor_class.options(
            num_cpus=0,
            resources={self.resource: 1},
            max_concurrency=ACTOR_CONCURRENCY,
            max_restarts=0,
            scheduling_strategy=PlacementGroupSchedulingStrategy(slot, 0),
            **_test_hooks(),
        ).remote(self.spec, session_id)
        ready = actor.ready.remote()
        done, _ = ray.wait([ready], timeout=self.start_timeout_s)
        try:
            if not done:
                raise ProviderError(
                    f"session {session_id}'s actor did not start within "
                    f"{self.start_timeout_s:g} s in its display slot"
                )
            where = ray.get(ready)
        except BaseException as exc:
            ray.kill(actor, no_restart=True)
            remove_placement_group(slot)
            if isinstance(exc, ray.exceptions.RayError):
                cause = getattr(exc, "cause", None) or exc
                raise ProviderError(f"session {session_id} could not start: {cause}") from None
            raise
        return RaySession(self, session_id, actor, where, self._codec, slot)

    def _roomiest_node(self) -> str | None:
        """The alive node with the most free display slots (None when unknown): the
        slot is asked for there first, which spreads sessions over the nodes."""
        try:
            from ray._private.state import state

            per_node = state.available_resources_per_node()
        except Exception:  # a private API: without it, Ray picks the node
            return None
        free = {node: res.get(self.resource, 0) for node, res in per_node.items()}
        best = max(free, key=lambda node: free[node], default=None)
        return best if best is not None and free[best] >= 1 else None

    def forget(self, session: RaySession) -> None:
        """Drop a closed session from the books (its slot is free again)."""
        with self._lock:
            if self._sessions.get(session.id) is session:
                del self._sessions[session.id]

    def lost(self, session: RaySession, error: Exception) -> SessionLostError:
        """The error a session whose actor died fails with, naming its node (its id, as
        :attr:`RaySession.node` and ``stats()`` give it) and why: its node died (once
        the head counts it dead, which for a raylet killed outright takes seconds), the
        head is gone, or its actor died on a node that lives."""
        deadline = time.monotonic() + NODE_DEATH_WAIT_S
        while True:
            head_lost = self.head_lost()
            if head_lost is not None:
                reason = head_lost
                break
            try:
                alive = session.node in self._alive_nodes()
            except ProviderError as exc:
                reason = f"its actor died and {exc}"
                break
            if not alive:
                reason = "its node died"
                break
            if not _node_may_be_dying(error) or time.monotonic() > deadline:
                first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
                reason = f"its actor died ({first_line or type(error).__name__})"
                break
            time.sleep(0.5)
        log.warning("session %s lost on node %s (%s): %s", session.id, session.node,
                    session.address, reason)  # fmt: skip
        return SessionLostError(session.id, session.node, f"{reason} (at {session.address})")

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
        try:
            available = self.ray.available_resources().get(self.resource, 0)
        except Exception as exc:  # the head (its GCS) is gone or unreachable
            raise ProviderError(f"the Ray cluster cannot be reached: {exc}") from exc
        return max(0, int(available) - self._reserving)

    def free_slots(self) -> int:
        """The cluster's display slots that nobody holds (this server, other drivers)
        less the sessions opening here that have not reserved theirs yet."""
        if self.head_lost() is not None:
            return 0
        with self._lock:
            return self._free_slots_locked()

    def stats(self) -> dict[str, Any]:
        """Nodes with their slots and this provider's sessions on each, and the
        cluster's ``state``: ``"connected"``, or ``"head lost"`` with the ``error``
        (answered at once then, from what the provider knows)."""
        head_lost = self.head_lost()
        if head_lost is not None:
            return {
                "name": self.name,
                "resource": self.resource,
                "state": "head lost",
                "error": head_lost,
                "free_slots": 0,
                "sessions": len(self.sessions()),
                "nodes": [],
            }
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
        with self._lock:
            opening = self._opening
        return {
            "name": self.name,
            "resource": self.resource,
            "state": "connected",
            "free_slots": self.free_slots(),
            "opening": opening,
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
        head_lost = self.head_lost()
        if head_lost is not None:  # nothing of the cluster can be reached to be closed
            log.warning("%s: leaving its sessions to it, and the connection as it is", head_lost)
            return
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


def _node_may_be_dying(error: Exception) -> bool:
    """Whether an actor's death may be its node's that the head has not counted yet:
    the call could not reach the actor's process (rather than the actor exiting)."""
    text = str(error)
    return any(sign in text for sign in ("RpcError", "UNAVAILABLE", "unreachable"))


def _test_hooks() -> dict[str, Any]:
    """The actor options that hand the server's test hook (its open delay) to the actor."""
    from viewfinder.ray.actor import OPEN_DELAY_ENV

    delay = os.environ.get(OPEN_DELAY_ENV)
    return {"runtime_env": {"env_vars": {OPEN_DELAY_ENV: delay}}} if delay else {}


def _actor_class() -> type:
    from viewfinder.ray.actor import SessionActor

    return SessionActor
