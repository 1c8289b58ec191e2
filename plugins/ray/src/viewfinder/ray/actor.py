"""The actor that runs one session: it builds the env where Ray placed it, answers the
calls the provider forwards, and closes the env when told to."""

from __future__ import annotations

import os
import pickle
import time
from typing import Any

from viewfinder.core.providers import EnvSpec, ProviderError

#: A test hook: seconds every session actor waits before it builds its env, as one does
#: on a loaded cluster. The provider hands it to its actors when the server has it set.
OPEN_DELAY_ENV = "VIEWFINDER_RAY_TEST_OPEN_DELAY_S"


class SessionActor:
    """One session's env on a Ray node (wrapped with ``ray.remote`` by the provider).

    The actor is threaded (its ``max_concurrency`` is above one), so :meth:`cancel` and
    :meth:`close` run while a :meth:`call` is running, as the env allows.
    """

    def __init__(self, spec: EnvSpec, session_id: str) -> None:
        self.session_id = session_id
        delay = float(os.environ.get(OPEN_DELAY_ENV) or 0)
        if delay > 0:
            time.sleep(delay)
        # the env, and every process it starts (display, worker), belong to this actor
        self._env = spec.build(session_id)
        self._codec = spec.result_codec()

    def ready(self) -> dict[str, Any]:
        """Where the actor runs: the node id, its address and this process's id."""
        import ray

        return {
            "node": ray.get_runtime_context().get_node_id(),
            "address": ray.util.get_node_ip_address(),
            "pid": os.getpid(),
        }

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``env.name(*args, **kwargs)`` (or the attribute's value), packed by the codec."""
        if name.startswith("_"):
            raise AttributeError(f"{name!r} is private to the env; call its public methods")
        try:
            attribute = getattr(self._env, name)
            if callable(attribute):
                value = attribute(*args, **kwargs)
            elif args or kwargs:
                raise TypeError(f"{name!r} is an attribute of the env, not a method: pass nothing")
            else:
                value = attribute
        except Exception as exc:
            raise portable(exc) from None
        return self._codec.pack(value) if self._codec is not None else value

    def cancel(self, reason: str) -> bool:
        """Stop the env's running call, if it can be stopped."""
        cancel = getattr(self._env, "cancel", None)
        return bool(cancel(reason)) if callable(cancel) else False

    def close(self) -> None:
        """Close the env: its processes stopped, its display stopped."""
        close = getattr(self._env, "close", None)
        if callable(close):
            close()


def portable(error: Exception) -> Exception:
    """``error`` when it survives the trip to the caller (pickled, then rebuilt), else a
    :class:`ProviderError` with its type and message (an exception whose ``__init__``
    takes other arguments than its message cannot be rebuilt by pickle)."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return ProviderError(f"{type(error).__name__}: {error}")
    return error
