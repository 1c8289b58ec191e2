"""The capture facade: find backends through plugins and capture with the right one."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from viewfinder.core.backend import Availability, CaptureBackend
from viewfinder.core.errors import (
    BackendUnavailableError,
    NoBackendAvailableError,
    PluginError,
    UnknownBackendError,
)
from viewfinder.core.geometry import Region
from viewfinder.core.plugins import get_plugin_manager
from viewfinder.core.screenshot import Screenshot

BackendFactory = Callable[..., CaptureBackend]


@dataclass(frozen=True)
class BackendSpec:
    """A registered backend: its name, factory and the plugin that registered it."""

    name: str
    factory: BackendFactory
    plugin: str

    @property
    def priority(self) -> int:
        return int(getattr(self.factory, "priority", 0))

    def availability(self, **options: Any) -> Availability:
        """Ask the factory's ``availability(**options)`` (yes when it has none)."""
        check = getattr(self.factory, "availability", None)
        if check is None:
            return Availability.yes()
        try:
            return check(**options)
        except Exception as exc:  # a broken check must not hide the other backends
            return Availability.no(f"availability check failed: {exc!r}")


def backend_specs() -> dict[str, BackendSpec]:
    """Every registered capture backend by name, asking the plugins afresh."""
    hook = get_plugin_manager().hook.viewfinder_register_capture_backends
    specs: dict[str, BackendSpec] = {}
    for impl in hook.get_hookimpls():

        def register(name: str, factory: BackendFactory, _plugin: str = impl.plugin_name) -> None:
            if not callable(factory):
                raise PluginError(
                    f"plugin {_plugin!r} registered backend {name!r} with a "
                    f"factory that is not callable: {factory!r}"
                )
            if name in specs and specs[name].plugin != _plugin:
                raise PluginError(
                    f"capture backend {name!r} is registered by both {specs[name].plugin!r} "
                    f"and {_plugin!r}; disable one with VIEWFINDER_DISABLE_PLUGINS"
                )
            specs[name] = BackendSpec(name=name, factory=factory, plugin=_plugin)

        impl.function(register)
    return specs


def _best_available(specs: Mapping[str, BackendSpec]) -> BackendSpec:
    reasons = []
    for spec in sorted(specs.values(), key=lambda s: -s.priority):
        if spec.priority < 0:
            continue
        availability = spec.availability()
        if availability:
            return spec
        reasons.append(f"{spec.name}: {availability.reason}")
    detail = "; ".join(reasons) or "no capture backend plugin is installed"
    raise NoBackendAvailableError(
        f"no capture backend can capture here ({detail}). Start a display "
        "(`viewfinder display start`), set DISPLAY, or install Chromium."
    )


def resolve_backend(name: str | None = None) -> BackendSpec:
    """The spec for ``name``, else ``$VIEWFINDER_BACKEND``, else the best available one."""
    specs = backend_specs()
    chosen = name or os.environ.get("VIEWFINDER_BACKEND") or None
    if chosen is None:
        return _best_available(specs)
    if chosen not in specs:
        raise UnknownBackendError(chosen, specs)
    return specs[chosen]


def get_backend(name: str | None = None, **options: Any) -> CaptureBackend:
    """Create a capture backend (see :func:`resolve_backend`) with backend ``options``."""
    spec = resolve_backend(name)
    availability = spec.availability(**options)
    if not availability:
        raise BackendUnavailableError(spec.name, availability.reason)
    return spec.factory(**options)


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
