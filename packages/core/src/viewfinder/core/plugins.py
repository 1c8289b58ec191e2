"""The plugin manager: finds plugins by entry point, lazily, once.

Plugins are found in the ``viewfinder`` entry point group. ``VIEWFINDER_PLUGINS``
(comma-separated names) loads only those; ``VIEWFINDER_DISABLE_PLUGINS`` skips the
named ones; a name in either that no installed plugin has is an error. Nothing is
loaded at import time: the first call to :func:`get_plugin_manager` does it.

A plugin that fails to import is reported once (:func:`broken_plugins`, a logged
warning, ``viewfinder plugins``) and left out; everything else keeps working.
"""

from __future__ import annotations

import difflib
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

import pluggy

from viewfinder.core import hookspecs
from viewfinder.core.errors import PluginError

if TYPE_CHECKING:
    from viewfinder.core.screenshot import Screenshot

ENTRY_POINT_GROUP = "viewfinder"
log = logging.getLogger(__name__)

_lock = threading.RLock()
_manager: pluggy.PluginManager | None = None
_distributions: dict[str, tuple[str, str]] = {}
_broken: dict[str, BrokenPlugin] = {}
#: The hook whose implementations are isolated from each other (see ViewfinderPlugins).
_OBSERVER_HOOK = "viewfinder_screenshot_captured"


@dataclass(frozen=True)
class PluginInfo:
    """One registered plugin: its name, the distribution that installed it, its hooks."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]


@dataclass(frozen=True)
class BrokenPlugin:
    """An installed plugin that could not be imported, and why."""

    name: str
    distribution: str | None
    entry_point: str
    error: str

    def __str__(self) -> str:
        origin = f" from distribution {self.distribution!r}" if self.distribution else ""
        return (
            f"plugin {self.name!r}{origin} (entry point {self.entry_point}) failed to import: "
            f"{self.error}; it is left out. Reinstall or fix it, or skip it with "
            f"VIEWFINDER_DISABLE_PLUGINS={self.name}"
        )


class ViewfinderPlugins(pluggy.PluginManager):
    """pluggy's manager, with every screenshot observer isolated from the others.

    Each plain implementation of ``viewfinder_screenshot_captured`` is wrapped when its
    plugin registers, so one that raises is logged and the capture and the other
    observers go on; the hook is still called through pluggy (wrappers run as usual).
    """

    def register(self, plugin: object, name: str | None = None) -> str | None:
        registered = super().register(plugin, name)
        caller = getattr(self.hook, _OBSERVER_HOOK, None)
        if registered is not None and isinstance(caller, pluggy.HookCaller):
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and not (impl.hookwrapper or impl.wrapper):
                    # pluggy calls impl.function by the argument names it read from the
                    # original: the wrapper passes them on unchanged
                    impl.function = _isolated(impl.function, impl.plugin_name)  # type: ignore[misc]
        return registered


def _isolated(function: Any, plugin_name: str) -> Any:
    if getattr(function, "_viewfinder_isolated", False):
        return function

    def observe(*args: Any, **kwargs: Any) -> None:
        try:
            function(*args, **kwargs)
        except Exception:  # observers must never break the capture
            log.exception("screenshot observer %r raised; ignored", plugin_name)

    observe._viewfinder_isolated = True  # type: ignore[attr-defined]
    return observe


def _names_from_env(variable: str) -> set[str] | None:
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _load_entry_points(manager: pluggy.PluginManager) -> None:
    allowed = _names_from_env("VIEWFINDER_PLUGINS")
    disabled = _names_from_env("VIEWFINDER_DISABLE_PLUGINS") or set()
    entry_points = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    _check_named_plugins(allowed, disabled, {entry_point.name for entry_point in entry_points})
    for entry_point in entry_points:
        name = entry_point.name
        if (allowed is not None and name not in allowed) or name in disabled:
            manager.set_blocked(name)
            continue
        if manager.get_plugin(name) is not None or manager.is_blocked(name):
            continue
        dist = entry_point.dist
        try:
            plugin = entry_point.load()
        except Exception as exc:  # any import error in third-party code
            broken = BrokenPlugin(
                name, dist.name if dist else None, f"{name} = {entry_point.value}", repr(exc)
            )
            _broken[name] = broken
            log.warning("%s", broken)
            continue
        register_plugin(plugin, name=name, manager=manager, check=False)
        if dist is not None:
            _distributions[name] = (dist.name, dist.version)
    check_plugins(manager)


def _check_named_plugins(allowed: set[str] | None, disabled: set[str], installed: set[str]) -> None:
    """A name in the allow- or block-list that no installed plugin has is a mistake."""
    for variable, names in (
        ("VIEWFINDER_PLUGINS", allowed),
        ("VIEWFINDER_DISABLE_PLUGINS", disabled),
    ):
        for name in sorted((names or set()) - installed):
            close = difflib.get_close_matches(name, sorted(installed), n=1)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else f"installed: {', '.join(sorted(installed))}"
            )
            raise PluginError(f"{variable} names plugin {name!r}, which is not installed; {hint}")


def broken_plugins() -> list[BrokenPlugin]:
    """The installed plugins that failed to import (loading the plugins first)."""
    get_plugin_manager()
    return [_broken[name] for name in sorted(_broken)]


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with every installed plugin loaded (once)."""
    global _manager
    if _manager is not None:
        return _manager
    with _lock:
        if _manager is None:
            manager = ViewfinderPlugins(hookspecs.PROJECT)
            manager.add_hookspecs(hookspecs)
            _load_entry_points(manager)
            _manager = manager
    return _manager


def reset_plugin_manager() -> None:
    """Forget the loaded plugins; the next :func:`get_plugin_manager` loads them again.

    Use after changing ``VIEWFINDER_PLUGINS`` / ``VIEWFINDER_DISABLE_PLUGINS`` or
    installing a plugin in a running process.
    """
    global _manager
    with _lock:
        _manager = None
        _distributions.clear()
        _broken.clear()


def register_plugin(
    plugin: object,
    name: str | None = None,
    *,
    manager: pluggy.PluginManager | None = None,
    check: bool = True,
) -> str:
    """Register an in-process plugin (a module or object with hookimpls); return its name."""
    manager = manager or get_plugin_manager()
    try:
        registered = manager.register(plugin, name=name)
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {name or plugin!r} is invalid: {exc}") from exc
    except ValueError as exc:
        raise PluginError(f"cannot register plugin {name!r}: {exc}") from exc
    if registered is None:
        raise PluginError(f"plugin {name!r} is blocked (see VIEWFINDER_DISABLE_PLUGINS)")
    if check:
        try:
            check_plugins(manager)
        except PluginError:
            manager.unregister(plugin)
            raise
    return registered


def unregister_plugin(name: str, manager: pluggy.PluginManager | None = None) -> None:
    manager = manager or get_plugin_manager()
    plugin = manager.get_plugin(name)
    if plugin is not None:
        manager.unregister(plugin)


def check_plugins(manager: pluggy.PluginManager | None = None) -> None:
    """Fail loudly when a plugin implements a hook that does not exist (a misspelling)."""
    manager = manager or get_plugin_manager()
    try:
        manager.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(_describe_unknown_hooks(manager) or str(exc)) from exc


def _describe_unknown_hooks(manager: pluggy.PluginManager) -> str | None:
    callers = {
        name: caller
        for name, caller in vars(manager.hook).items()
        if isinstance(caller, pluggy.HookCaller)
    }
    known = sorted(name for name, caller in callers.items() if caller.has_spec())
    for hook_name, caller in callers.items():
        if caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if impl.optionalhook:
                continue
            close = difflib.get_close_matches(hook_name, known, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known hooks: {', '.join(known)}"
            return f"plugin {impl.plugin_name!r} implements unknown hook {hook_name!r}; {hint}"
    return None


def plugin_infos() -> list[PluginInfo]:
    """Every registered plugin with its distribution and the hooks it implements."""
    manager = get_plugin_manager()
    infos = []
    for name, plugin in manager.list_name_plugin():
        if plugin is None:  # a blocked name
            continue
        hooks = tuple(sorted(caller.name for caller in manager.get_hookcallers(plugin) or []))
        dist, version = _distributions.get(name, (None, None))
        infos.append(PluginInfo(name=name, distribution=dist, version=version, hooks=hooks))
    return sorted(infos, key=lambda info: info.name)


def publish_screenshot(screenshot: Screenshot, context: Mapping[str, Any]) -> None:
    """Hand a capture to every ``viewfinder_screenshot_captured`` observer, each isolated.

    Called through pluggy (so wrappers run); an observer that raises is logged and
    skipped, and the capture and the other observers go on.
    """
    hook = get_plugin_manager().hook.viewfinder_screenshot_captured
    try:
        hook(screenshot=screenshot, context=context)
    except Exception:  # a wrapper observer that raised: still never the capture's problem
        log.exception("a screenshot observer wrapper raised; ignored")


def hook_per_plugin(hook_name: str) -> Iterator[tuple[str, Callable[..., list[Any]]]]:
    """Hook ``hook_name`` of one plugin at a time: yields (plugin name, its hook caller).

    For registration hooks, where what a plugin registers must be credited to it (two
    plugins claiming one name is an error naming both). Each caller goes through pluggy,
    with the wrappers of every plugin around that one plugin's implementation.
    """
    manager = get_plugin_manager()
    implementations = getattr(manager.hook, hook_name).get_hookimpls()
    plain = [impl for impl in implementations if not (impl.hookwrapper or impl.wrapper)]
    everyone = {impl.plugin for impl in plain}
    for impl in reversed(plain):  # pluggy's own calling order
        others = [plugin for plugin in everyone if plugin is not impl.plugin]
        yield impl.plugin_name, manager.subset_hook_caller(hook_name, remove_plugins=others)
