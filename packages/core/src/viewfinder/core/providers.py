"""Session providers: where env sessions run (this machine, a Ray cluster, any plugin).

A server, or a trainer's :class:`~viewfinder.server.pool.EnvPool`, says *what* each
session runs with an :class:`EnvSpec` (the import path of a factory and picklable
keyword arguments) and asks a provider, by name, to run it::

    provider = open_provider("ray", EnvSpec("my_envs:make_env", {"level": 3}), address="auto")
    session = provider.open("a1b2")          # the env, built where the session runs
    session.call("reset")                    # env.reset() there; its result here
    session.close()
    provider.close()

Providers register through the ``viewfinder_register_session_providers`` hook
(``register(name, factory)``); ``factory(spec, **options)`` returns a
:class:`SessionProvider`. The caller cannot tell where a session runs except by
:attr:`ProvidedSession.node`: a session whose node dies fails with
:class:`SessionLostError`, and a provider without a free slot refuses with
:class:`NoFreeSlotError`.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast, runtime_checkable

from viewfinder.core.errors import PluginError, ViewfinderError

log = logging.getLogger(__name__)

HOOK = "viewfinder_register_session_providers"


class ProviderError(ViewfinderError):
    """A provider could not do what was asked (its cluster is unreachable, ...)."""


class UnknownProviderError(ProviderError, LookupError):
    """A session provider was asked for by a name no plugin registered."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        self.available = sorted(available)
        hint = {"ray": " (pip install viewfinder-ray)"}.get(name, "")
        super().__init__(
            f"unknown session provider {name!r}{hint}; registered providers: "
            f"{', '.join(self.available) or 'none'}"
        )


class ProviderOptionError(ProviderError, ValueError):
    """A provider was given an option it does not take."""


class NoFreeSlotError(ProviderError):
    """Every display slot of the provider is taken: a new session cannot start now."""

    code = "CAPACITY_REACHED"

    def __init__(self, message: str, *, running: int = 0, slots: int = 0) -> None:
        #: Sessions this provider runs, and the slots it has in all (0 when unknown).
        self.running = running
        self.slots = slots
        super().__init__(message)


class SessionLostError(ProviderError):
    """A session is gone with what it held (its node died, its process was killed).

    ``node`` names where it ran. The session cannot be used again; open a new one
    (the provider places it on a node that is alive).
    """

    code = "SESSION_LOST"

    def __init__(self, session_id: str, node: str | None, reason: str) -> None:
        self.session_id = session_id
        self.node = node
        self.reason = reason
        where = f" on node {node}" if node else ""
        super().__init__(
            f"session {session_id} was lost{where}: {reason}; open a new session "
            "(it starts on a node that is alive)"
        )


@dataclass(frozen=True)
class EnvSpec:
    """What each session runs, built where the session runs.

    - ``factory``: ``"package.module:function"``, called there as
      ``function(session_id, **kwargs, **resources)`` and returning the session's env
      (any object; callers use its methods through :meth:`ProvidedSession.call`).
      ``resources`` are what the provider hands out where it runs: the ``local``
      provider passes ``displays`` (its pool of warm displays); the ``ray`` provider
      passes nothing, and each session starts a display of its own.
    - ``kwargs``: keyword arguments; they must pickle (they cross to other machines).
    - ``codec``: optional ``"package.module:attribute"`` of a :class:`ResultCodec`;
      a provider that carries results between processes packs each result where the
      env runs and unpacks it where the caller is (screenshots as bytes, not base64).
    """

    factory: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    codec: str | None = None

    def __post_init__(self) -> None:
        for what, path in (("factory", self.factory), ("codec", self.codec)):
            if path is not None and (":" not in path or path.startswith(":")):
                raise ValueError(
                    f"EnvSpec {what} must be an import path 'package.module:name', got {path!r}"
                )

    def build(self, session_id: str, **resources: Any) -> Any:
        """Import the factory and make one session's env."""
        factory = import_path(self.factory, "EnvSpec factory")
        return factory(session_id, **self.kwargs, **resources)

    def result_codec(self) -> ResultCodec | None:
        """The codec (imported now), or None."""
        if self.codec is None:
            return None
        return cast(ResultCodec, import_path(self.codec, "EnvSpec codec"))


class ResultCodec(Protocol):
    """Turns an env's results into what travels well between processes, and back."""

    def pack(self, value: Any) -> Any:
        """Where the env runs: ``value`` in a form cheap to send (bytes, not base64)."""
        ...

    def unpack(self, value: Any) -> Any:
        """Where the caller is: the value :meth:`pack` was given."""
        ...


@runtime_checkable
class ProvidedSession(Protocol):
    """One session's env, wherever it runs. Methods may be called from any thread;
    :meth:`cancel` and :meth:`close` also while a :meth:`call` runs."""

    #: The id the session was opened with.
    id: str
    #: Where it runs: ``"local"`` for this process, a node id for a cluster.
    node: str

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """``env.name(*args, **kwargs)`` where the env runs, and its result (blocking);
        for an attribute or property (``state``), its value. Raises what the env
        raised, or :class:`SessionLostError` when the session is gone."""
        ...

    def cancel(self, reason: str) -> bool:
        """Ask the env to stop its running call (``env.cancel(reason)``), without
        waiting; True when a call was running."""
        ...

    def close(self) -> None:
        """End the session: its env closed, what it started stopped (idempotent)."""
        ...


@runtime_checkable
class SessionProvider(Protocol):
    """Runs sessions of one :class:`EnvSpec` somewhere (see the module docs)."""

    #: The name it was registered under.
    name: str

    def open(self, session_id: str) -> ProvidedSession:
        """A new session (blocking until its env exists), or :class:`NoFreeSlotError`."""
        ...

    def free_slots(self) -> int | None:
        """Sessions that could open now; None when only the caller's own limit applies."""
        ...

    def stats(self) -> dict[str, Any]:
        """What the provider runs, as JSON-ready data (``GET /health`` shows it)."""
        ...

    def close(self) -> None:
        """Close every session it opened and stop what it started (idempotent)."""
        ...


#: ``factory(spec, **options)``: makes a provider.
ProviderFactory = Callable[..., SessionProvider]


@dataclass(frozen=True)
class ProviderSpec:
    """A registered provider: its name, factory (or its import path) and plugin."""

    name: str
    target: ProviderFactory | str
    plugin: str

    @functools.cached_property
    def factory(self) -> ProviderFactory:
        """The factory (imported now when it was registered by import path)."""
        if not isinstance(self.target, str):
            return self.target
        try:
            return cast(ProviderFactory, import_path(self.target, "provider factory"))
        except ImportError as exc:
            raise PluginError(
                f"session provider {self.name!r} of plugin {self.plugin!r} cannot be loaded "
                f"from {self.target!r}: {exc}; reinstall the plugin, or skip it with "
                f"VIEWFINDER_DISABLE_PLUGINS={self.plugin}"
            ) from exc

    def create(self, spec: EnvSpec, **options: Any) -> SessionProvider:
        """A provider for ``spec``; an option its factory does not take is refused."""
        try:
            parameters = list(inspect.signature(self.factory).parameters.values())[1:]
        except (TypeError, ValueError):
            parameters = []
        accepted = sorted(
            p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        )
        unknown = set(options) - set(accepted)
        if unknown and not any(p.kind is p.VAR_KEYWORD for p in parameters):
            raise ProviderOptionError(
                f"session provider {self.name!r} takes no option "
                f"{', '.join(repr(name) for name in sorted(unknown))}; its options: "
                f"{', '.join(accepted) or 'none'}"
            )
        return self.factory(spec, **options)


def import_path(path: str, what: str) -> Any:
    """The object at ``"package.module:attribute"``; ImportError saying which part failed."""
    module_name, _, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(f"{what} {path!r}: cannot import {module_name!r}: {exc}") from exc
    try:
        return functools.reduce(getattr, attribute.split("."), module)
    except AttributeError:
        raise ImportError(f"{what} {path!r}: {module_name!r} has no {attribute!r}") from None


def session_providers() -> dict[str, ProviderSpec]:
    """Every registered session provider by name, asking the plugins afresh."""
    from viewfinder.core.plugins import hook_per_plugin

    found: dict[str, ProviderSpec] = {}
    for plugin, hook in hook_per_plugin(HOOK):

        def register(name: str, factory: ProviderFactory | str, _plugin: str = plugin) -> None:
            if not isinstance(name, str) or not name:
                raise PluginError(f"plugin {_plugin!r} registered a provider without a name")
            if isinstance(factory, str) and ":" not in factory:
                raise PluginError(
                    f"plugin {_plugin!r} registered provider {name!r} as {factory!r}, which "
                    "is neither a factory nor an import path 'package.module:Class'"
                )
            if not isinstance(factory, str) and not callable(factory):
                raise PluginError(
                    f"plugin {_plugin!r} registered provider {name!r} with {factory!r}, "
                    "which is not callable"
                )
            if name in found and found[name].plugin != _plugin:
                raise PluginError(
                    f"session provider {name!r} is registered by both {found[name].plugin!r} "
                    f"and {_plugin!r}; disable one with VIEWFINDER_DISABLE_PLUGINS"
                )
            found[name] = ProviderSpec(name=name, target=factory, plugin=_plugin)

        hook(register=register)
    return found


def open_provider(name: str, spec: EnvSpec, **options: Any) -> SessionProvider:
    """The provider registered as ``name``, running sessions of ``spec``.

    :class:`UnknownProviderError` lists the registered names;
    :class:`ProviderOptionError` names an option the provider does not take.
    """
    providers = session_providers()
    if name not in providers:
        raise UnknownProviderError(name, providers)
    return providers[name].create(spec, **options)
