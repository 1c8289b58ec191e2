"""One session of the ray provider: its actor, the node it runs on, and the display
slot it holds (see :mod:`viewfinder.ray.provider`)."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from viewfinder.core.providers import ProviderError, ResultCodec, SessionLostError

if TYPE_CHECKING:
    from ray.actor import ActorHandle
    from viewfinder.ray.provider import RayProvider

log = logging.getLogger(__name__)


class RaySession:
    """One session: its actor, and the node it runs on (see :class:`ProvidedSession`)."""

    def __init__(
        self,
        provider: RayProvider,
        session_id: str,
        actor: ActorHandle,
        where: dict[str, Any],
        codec: ResultCodec | None,
        slot: Any = None,
    ) -> None:
        self.id = session_id
        #: The Ray node id (hex) of the node the actor runs on.
        self.node: str = where["node"]
        #: That node's address, and the actor's process id there.
        self.address: str = where["address"]
        self.pid: int = where["pid"]
        self._provider = provider
        self._actor = actor
        #: The placement group holding the session's display slot.
        self._slot = slot
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
            # a group whose node died is placed again elsewhere: let the slot go now
            self._free_slot()
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
        if self._provider.head_lost() is not None:  # its actor cannot be reached
            self._provider.forget(self)
            return
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
            self._free_slot()
            self._provider.forget(self)

    def _free_slot(self) -> None:
        slot, self._slot = self._slot, None
        if slot is not None:
            from ray.util.placement_group import remove_placement_group

            try:
                remove_placement_group(slot)
            except Exception:  # the cluster is gone, or the group already is
                log.debug("session %s: its slot was not given back", self.id, exc_info=True)

    def __repr__(self) -> str:
        return f"<RaySession {self.id[:8]} node={self.node[:12]} pid={self.pid}>"
