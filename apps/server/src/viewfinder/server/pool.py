"""``EnvPool``: n sessions stepped together, the shape a GRPO rollout loop wants.

>>> from viewfinder.server.pool import EnvPool
>>> with EnvPool(8, provider="ray", env="code") as pool:      # doctest: +SKIP
...     pool.reset_all()
...     results = pool.step_all(["print(1 + 1)"] * 8, timeout_s=30)
...     [r.stdout if not isinstance(r, EnvError) else r.code for r in results]

Sessions come from a session provider by name (``local``: this machine; ``ray``: actors
on a Ray cluster), exactly as the server's do, so a pool behaves the same on both.
Results come back in the order of the sessions; a session that failed gives an
:class:`EnvError` in its place (a value, not an exception), and the others are not
held up: a step past ``timeout_s`` is cancelled and gives ``TIMEOUT``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from viewfinder.core.providers import (
    ProviderError,
    SessionLostError,
    SessionProvider,
    open_provider,
)
from viewfinder.server.provided import ProvidedEnv
from viewfinder.server.served import served_env
from viewfinder.server.settings import ServerSettings

log = logging.getLogger(__name__)

#: How long a step cancelled at its timeout may take to return before it is given up.
CANCEL_GRACE_S = 30.0


@dataclass(frozen=True)
class EnvError:
    """What one session gave instead of a result.

    ``code``: ``TIMEOUT`` (the step ran past its timeout and was cancelled; the session
    goes on), ``SESSION_LOST`` (its node or process died: :meth:`EnvPool.reopen` it),
    ``VALIDATION_ERROR`` (the action was malformed) or ``EXECUTION_ERROR`` (the env
    raised). ``index`` is the session's place in the pool, ``node`` where it ran.
    """

    code: str
    message: str
    index: int
    node: str | None = None


class EnvPool:
    """``n`` sessions of ``env`` (``"code"``, ``"desktop"``, or any registered
    environment's name) from ``provider``.

    - ``settings``: the sessions' settings, as a server's (code env limits, display
      size, the desktop's task); ``env`` and ``provider`` override theirs.
    - ``provider_options``: for the provider (``{"address": "auto"}`` for ray).
    - ``timeout_s``: the default time limit of every step (None: the env's own limit).

    Sessions are opened at once, in parallel; if one cannot open, those opened are
    closed and the error raised. Methods are not for concurrent use from several
    threads; the async ones run the same work off the event loop.
    """

    def __init__(
        self,
        n: int,
        provider: str = "local",
        env: str = "code",
        *,
        settings: ServerSettings | None = None,
        provider_options: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
    ) -> None:
        if n < 1:
            raise ValueError(f"a pool needs at least one session, got n={n}")
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        base = settings or ServerSettings()
        options = {**base.provider_options, **(provider_options or {})}
        self.settings = base.with_changes(
            env=env, provider=provider, provider_options=options, max_sessions=max(n, 1)
        )
        self.timeout_s = timeout_s
        self._threads = concurrent.futures.ThreadPoolExecutor(
            max_workers=n + 2, thread_name_prefix="viewfinder-pool"
        )
        served = served_env(self.settings)
        self._action = getattr(served, "parse_action", None) or (lambda action: action)
        self.provider: SessionProvider = open_provider(
            provider, served.spec(), **self.settings.provider_settings()
        )
        self.envs: list[ProvidedEnv] = []
        try:
            opened = list(self._threads.map(self._open, range(n)))
        except BaseException:
            self.close()
            raise
        self.envs = opened

    def _open(self, _: int) -> ProvidedEnv:
        return ProvidedEnv(self.provider.open(uuid.uuid4().hex))

    # -- facts ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.envs)

    @property
    def nodes(self) -> list[str]:
        """Where each session runs, in order (``"local"``, or a cluster node's id)."""
        return [env.node for env in self.envs]

    # -- batch calls ------------------------------------------------------------------------

    def reset_all(self, *args: Any, timeout_s: float | None = None, **kwargs: Any) -> list[Any]:
        """Reset every session (the same arguments for all: a code env's ``seed`` and
        ``episode_id``, a desktop's task); their first observations in order."""
        limit = timeout_s if timeout_s is not None else self.timeout_s
        return self._all(lambda i: self.envs[i].reset(*args, **kwargs), limit)

    def step_all(self, actions: Sequence[Any], timeout_s: float | None = None) -> list[Any]:
        """Step session ``i`` with ``actions[i]``, all at once; the observations in order.

        An action is what the env takes: for a code env a ``CodeAction``, its fields as
        a dict, or the code as a string; for a desktop a ``ListToolsAction`` or
        ``CallToolAction``, or their fields as a dict (``{"type": "call_tool",
        "tool_name": ..., "arguments": {...}}``).
        """
        if len(actions) != len(self.envs):
            raise ValueError(f"give one action per session: {len(self.envs)}, not {len(actions)}")
        parsed = [self._parse(i, action) for i, action in enumerate(actions)]
        limit = timeout_s if timeout_s is not None else self.timeout_s

        def step(i: int) -> Any:
            action = parsed[i]
            if isinstance(action, EnvError):
                return action
            # the pool's limit is the one that counts, whatever the env's own: a step
            # past it is cancelled (the env goes on) and gives TIMEOUT
            return self.envs[i].step(action)

        return self._all(step, limit)

    async def areset_all(
        self, *args: Any, timeout_s: float | None = None, **kwargs: Any
    ) -> list[Any]:
        """:meth:`reset_all`, awaited (the event loop goes on meanwhile)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None, lambda: self.reset_all(*args, timeout_s=timeout_s, **kwargs)
        )

    async def astep_all(self, actions: Sequence[Any], timeout_s: float | None = None) -> list[Any]:
        """:meth:`step_all`, awaited (the event loop goes on meanwhile)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: self.step_all(actions, timeout_s))

    def reopen(self, index: int) -> ProvidedEnv:
        """Replace session ``index`` (one that was lost) with a new session."""
        old = self.envs[index]
        try:
            old.close()
        except Exception:  # it is gone already
            log.debug("closing lost session %d failed", index, exc_info=True)
        self.envs[index] = self._open(index)
        return self.envs[index]

    # -- the end -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close every session and the provider (idempotent)."""
        envs, self.envs = self.envs, []
        try:
            list(self._threads.map(lambda env: env.close(), envs))
        finally:
            # also the sessions of an open that failed half way: the provider has them
            self.provider.close()
            self._threads.shutdown(wait=True)

    def __enter__(self) -> EnvPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> EnvPool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    # -- internals -----------------------------------------------------------------------------

    def _parse(self, index: int, action: Any) -> Any:
        try:
            return self._action(action)
        except (ValidationError, TypeError, ValueError) as exc:
            return EnvError("VALIDATION_ERROR", f"action {index}: {exc}", index)

    def _all(self, call: Callable[[int], Any], timeout_s: float | None) -> list[Any]:
        """``call(i)`` for every session at once; results (or EnvErrors) in order."""
        futures = [self._threads.submit(call, i) for i in range(len(self.envs))]
        _, late = concurrent.futures.wait(futures, timeout=timeout_s)
        for i, future in enumerate(futures):
            if future in late:
                self.envs[i].cancel(f"the step ran past its timeout ({timeout_s:g} s)")
        if late:
            concurrent.futures.wait(late, timeout=CANCEL_GRACE_S)
        return [
            self._outcome(i, future, future in late, timeout_s) for i, future in enumerate(futures)
        ]

    def _outcome(
        self, index: int, future: concurrent.futures.Future[Any], late: bool, limit: float | None
    ) -> Any:
        node = self.envs[index].node
        if late:
            return EnvError(
                "TIMEOUT", f"the step ran past its timeout ({limit:g} s) and was cancelled",
                index, node,
            )  # fmt: skip
        error = future.exception()
        if error is None:
            return future.result()
        if isinstance(error, SessionLostError):
            return EnvError("SESSION_LOST", str(error), index, error.node)
        if isinstance(error, ProviderError):
            return EnvError("EXECUTION_ERROR", str(error), index, node)
        return EnvError("EXECUTION_ERROR", f"{type(error).__name__}: {error}", index, node)
