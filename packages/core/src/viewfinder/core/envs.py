"""Environments as plugins: what a server can serve (``viewfinder serve --env NAME``).

Plugins register environments through the ``viewfinder_register_envs`` hook
(``register(name, factory, description=...)``); a host (the server, a task runner)
asks for one by name::

    entry = registered_envs()["desktop"]
    served = entry.factory(settings)     # imported now when registered by import path

Nothing here knows an environment by name: the code env and the desktop env register
the same way a third party's does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from viewfinder.core.errors import PluginError, ViewfinderError
from viewfinder.core.providers import import_path

HOOK = "viewfinder_register_envs"


class UnknownEnvError(ViewfinderError, LookupError):
    """An environment was asked for by a name no plugin registered."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        self.available = sorted(available)
        super().__init__(
            f"unknown environment {name!r}; registered environments: "
            f"{', '.join(self.available) or 'none'} (a plugin adds one with the "
            f"viewfinder_register_envs hook)"
        )


@dataclass(frozen=True)
class EnvEntry:
    """A registered environment: its name, factory (or import path), plugin, description."""

    name: str
    target: Callable[..., Any] | str
    plugin: str
    description: str = ""

    @functools.cached_property
    def factory(self) -> Callable[..., Any]:
        """The factory (imported now when it was registered by import path)."""
        if not isinstance(self.target, str):
            return self.target
        try:
            return import_path(self.target, "environment factory")
        except ImportError as exc:
            raise PluginError(
                f"environment {self.name!r} of plugin {self.plugin!r} cannot be loaded from "
                f"{self.target!r}: {exc}; reinstall the plugin, or skip it with "
                f"VIEWFINDER_DISABLE_PLUGINS={self.plugin}"
            ) from exc


def registered_envs() -> dict[str, EnvEntry]:
    """Every registered environment by name, asking the plugins afresh."""
    from viewfinder.core.plugins import hook_per_plugin

    found: dict[str, EnvEntry] = {}
    for plugin, hook in hook_per_plugin(HOOK):

        def register(
            name: str,
            factory: Callable[..., Any] | str,
            description: str = "",
            _plugin: str = plugin,
        ) -> None:
            if not isinstance(name, str) or not name.strip() or name != name.strip():
                raise PluginError(f"plugin {_plugin!r} registered an environment without a name")
            if isinstance(factory, str) and ":" not in factory:
                raise PluginError(
                    f"plugin {_plugin!r} registered environment {name!r} as {factory!r}, "
                    "which is neither a factory nor an import path 'package.module:Class'"
                )
            if not isinstance(factory, str) and not callable(factory):
                raise PluginError(
                    f"plugin {_plugin!r} registered environment {name!r} with {factory!r}, "
                    "which is not callable"
                )
            if name in found and found[name].plugin != _plugin:
                raise PluginError(
                    f"environment {name!r} is registered by both {found[name].plugin!r} and "
                    f"{_plugin!r}; disable one with VIEWFINDER_DISABLE_PLUGINS"
                )
            found[name] = EnvEntry(name, factory, _plugin, " ".join(str(description).split()))

        hook(register=register)
    return found


def env_entry(name: str) -> EnvEntry:
    """The environment registered as ``name``, or :class:`UnknownEnvError` listing them."""
    envs = registered_envs()
    if name not in envs:
        raise UnknownEnvError(name, envs)
    return envs[name]
