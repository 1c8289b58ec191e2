"""The capture facade: find backends through plugins and capture with the right one."""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast

from viewfinder.core.backend import Availability, CaptureBackend
from viewfinder.core.errors import (
    BackendOptionError,
    BackendUnavailableError,
    NoBackendAvailableError,
    PluginError,
    UnknownBackendError,
    ViewfinderError,
)
from viewfinder.core.geometry import Region
from viewfinder.core.plugins import hook_per_plugin
from viewfinder.core.screenshot import Screenshot

log = logging.getLogger(__name__)

BackendFactory = Callable[..., CaptureBackend]
SpecT = TypeVar("SpecT", bound="BackendSpec")
#: Where backend authors read what a backend must be; every plugin error points there.
PLUGIN_GUIDE = "docs/plugins.md"


@dataclass(frozen=True)
class BackendSpec:
    """A registered backend: its name, factory and the plugin that registered it.

    ``target`` is the factory, or the import path ``"package.module:Class"`` of one,
    imported when the backend is first needed (so a command that captures with one
    backend does not import the others' dependencies).
    """

    name: str
    target: BackendFactory | str
    plugin: str

    #: What the factory makes, named in errors, and the class it must be an instance of.
    kind: ClassVar[str] = "capture backend"
    product: ClassVar[type] = CaptureBackend
    #: How to make a factory right, for the error when it made something else.
    product_hint: ClassVar[str] = "subclass CaptureBackend and implement _capture()"

    @functools.cached_property
    def factory(self) -> BackendFactory:
        """The factory (imported now when it was registered by import path)."""
        if not isinstance(self.target, str):
            return self.target
        module_name, _, attribute = self.target.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            raise PluginError(
                f"{self.kind} {self.name!r} of plugin {self.plugin!r} cannot be loaded "
                f"from {self.target!r}: {exc!r}; reinstall the plugin, or skip it with "
                f"VIEWFINDER_DISABLE_PLUGINS={self.plugin}"
            ) from exc
        if not callable(factory):
            raise _not_callable(self.plugin, self.name, factory)
        return cast(BackendFactory, factory)

    @property
    def priority(self) -> int:
        return int(getattr(self.factory, "priority", 0))

    def availability(self, **options: Any) -> Availability:
        """Ask the factory's ``availability(**options)`` (yes when it has none)."""
        try:
            check = getattr(self.factory, "availability", None)
        except PluginError as exc:
            return Availability.no(str(exc))
        if check is None:
            return Availability.yes()
        try:
            return cast(Availability, check(**options))
        except Exception as exc:  # a broken check must not hide the other backends
            return Availability.no(f"availability check failed: {exc!r}")

    def options(self) -> tuple[list[str], bool]:
        """The keyword options the factory takes, and whether it takes any (``**kwargs``)."""
        try:
            parameters = inspect.signature(self.factory).parameters.values()
        except (TypeError, ValueError):  # no signature to read: let the factory judge
            return [], True
        names = [
            p.name
            for p in parameters
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
        ]
        return names, any(p.kind is p.VAR_KEYWORD for p in parameters)

    def create(self, **options: Any) -> Any:
        """What the factory makes, checked to be a :attr:`product`; plugin faults as
        PluginError (a :class:`CaptureBackend` for a capture backend)."""
        accepted, takes_any = self.options()
        unknown = set(options) - set(accepted)
        if unknown and not takes_any:
            raise BackendOptionError(self.name, unknown, accepted, self.kind)
        try:
            instance = self.factory(**options)
        except ViewfinderError:
            raise
        except Exception as exc:
            raise PluginError(
                f"{self.kind} {self.name!r} of plugin {self.plugin!r} failed to start: "
                f"{exc!r}. Its factory must return a {self.product.__name__} or raise a "
                f"viewfinder error (see {PLUGIN_GUIDE})"
            ) from exc
        if not isinstance(instance, self.product):
            raise PluginError(
                f"{self.kind} {self.name!r} of plugin {self.plugin!r} made a "
                f"{type(instance).__name__}, not a {self.product.__module__.rsplit('.', 1)[0]}."
                f"{self.product.__name__}: {self.product_hint} (see {PLUGIN_GUIDE})"
            )
        return instance


def _not_callable(plugin: str, name: str, factory: object) -> PluginError:
    return PluginError(
        f"plugin {plugin!r} registered backend {name!r} with a factory that is not "
        f"callable: {factory!r} (see {PLUGIN_GUIDE})"
    )


def backend_specs() -> dict[str, BackendSpec]:
    """Every registered capture backend by name, asking the plugins afresh."""
    return registered_specs("viewfinder_register_capture_backends", "capture backend", BackendSpec)


def registered_specs(hook_name: str, kind: str, spec_class: type[SpecT]) -> dict[str, SpecT]:
    """What the plugins register through ``hook_name`` (a ``register(name, factory)``
    hook), as ``spec_class`` by name; a plugin that raises is logged and left out."""
    specs: dict[str, SpecT] = {}
    for plugin, hook in hook_per_plugin(hook_name):
        register = functools.partial(_register, specs, plugin, kind=kind, spec_class=spec_class)
        try:
            hook(register=register)
        except ViewfinderError:
            raise
        except Exception:  # one plugin's bug must not hide the others' registrations
            log.exception(
                "plugin %r raised in %s; its %ss are left out (see docs/plugins.md)",
                plugin,
                hook_name,
                kind,
            )
    return specs


def _register(
    specs: dict[str, Any],
    plugin: str,
    name: str,
    factory: Callable[..., Any] | str,
    *,
    kind: str = "capture backend",
    spec_class: type[BackendSpec] | None = None,
) -> None:
    """The ``register(name, factory)`` callback handed to one plugin (for a capture
    backend, or another ``kind`` of factory whose spec is a ``spec_class``)."""
    if not isinstance(factory, str) and not callable(factory):
        raise _not_callable(plugin, name, factory)
    if isinstance(factory, str) and ":" not in factory:
        raise PluginError(
            f"plugin {plugin!r} registered {kind} {name!r} as {factory!r}, which is "
            f"neither a factory nor an import path 'package.module:Class' (see {PLUGIN_GUIDE})"
        )
    if name in specs and specs[name].plugin != plugin:
        raise PluginError(
            f"{kind} {name!r} is registered by both {specs[name].plugin!r} "
            f"and {plugin!r}; disable one with VIEWFINDER_DISABLE_PLUGINS"
        )
    specs[name] = (spec_class or BackendSpec)(name=name, target=factory, plugin=plugin)


def _best_available(specs: Mapping[str, BackendSpec], options: Mapping[str, Any]) -> BackendSpec:
    reasons = []
    for spec in sorted(specs.values(), key=lambda s: -s.priority):
        if spec.priority < 0:
            continue
        accepted, takes_any = spec.options()
        if not takes_any and set(options) - set(accepted):
            continue  # made for other options (a page URL is no X display)
        availability = spec.availability(**options)
        if availability:
            return spec
        reasons.append(f"{spec.name}: {availability.reason}")
    detail = "; ".join(reasons) or "no capture backend plugin is installed"
    raise NoBackendAvailableError(
        f"no screen to capture here ({detail}). Set DISPLAY to an X display, or name "
        "one (`--display :N`, display=':N'; `viewfinder display start` starts one), or "
        "capture a page with `--backend cdp --url URL` (backend='cdp', url=...)."
    )


def resolve_backend(name: str | None = None, **options: Any) -> BackendSpec:
    """The spec for ``name``, else ``$VIEWFINDER_BACKEND``, else the best available one.

    The best available one is the backend of highest priority that takes ``options``
    and says it can capture with them; backends of negative priority (a browser page) are
    used only by name.
    """
    specs = backend_specs()
    chosen = name or os.environ.get("VIEWFINDER_BACKEND") or None
    if chosen is None:
        return _best_available(specs, options)
    if chosen not in specs:
        raise UnknownBackendError(chosen, specs)
    return specs[chosen]


def get_backend(name: str | None = None, **options: Any) -> CaptureBackend:
    """Create a capture backend (see :func:`resolve_backend`) with backend ``options``.

    Raises :class:`~viewfinder.core.BackendOptionError` for an option the backend does
    not take, and :class:`~viewfinder.core.PluginError` when its plugin misbehaves.
    """
    spec = resolve_backend(name, **options)
    accepted, takes_any = spec.options()
    unknown = set(options) - set(accepted)
    if unknown and not takes_any:
        raise BackendOptionError(spec.name, unknown, accepted)
    availability = spec.availability(**options)
    if not availability:
        raise BackendUnavailableError(spec.name, availability.reason)
    return spec.create(**options)


def capture(
    backend: str | None = None,
    *,
    region: Region | None = None,
    window: int | None = None,
    format: str = "png",
    quality: int | None = None,
    context: Mapping[str, Any] | None = None,
    **options: Any,
) -> Screenshot:
    """Capture one screenshot with a one-off backend.

    ``backend`` picks by name; without it ``$VIEWFINDER_BACKEND`` or the best available
    backend is used. ``options`` go to the backend's factory (``display=":1"``,
    ``url="http://..."``, ``monitor=1``, ...). For many captures, keep a backend from
    :func:`get_backend` instead.
    """
    with get_backend(backend, **options) as instance:
        return instance.capture(
            region=region, window=window, format=format, quality=quality, context=context
        )


async def acapture(
    backend: str | None = None,
    *,
    region: Region | None = None,
    window: int | None = None,
    format: str = "png",
    quality: int | None = None,
    context: Mapping[str, Any] | None = None,
    **options: Any,
) -> Screenshot:
    """Async :func:`capture`."""
    instance = get_backend(backend, **options)
    try:
        return await instance.acapture(
            region=region, window=window, format=format, quality=quality, context=context
        )
    finally:
        instance.close()
