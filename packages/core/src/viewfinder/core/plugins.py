"""The plugin manager: finds plugins by entry point, lazily, once.

Plugins are found in the ``viewfinder`` entry point group. ``VIEWFINDER_PLUGINS``
(comma-separated names) loads only those; ``VIEWFINDER_DISABLE_PLUGINS`` skips the
named ones. Nothing is loaded at import time: the first call to
:func:`get_plugin_manager` does it.
"""

from __future__ import annotations

import difflib
import logging
import os
import threading
from collections.abc import Mapping
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


@dataclass(frozen=True)
class PluginInfo:
    """One registered plugin: its name, the distribution that installed it, its hooks."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]


def _names_from_env(variable: str) -> set[str] | None:
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _load_entry_points(manager: pluggy.PluginManager) -> None:
    allowed = _names_from_env("VIEWFINDER_PLUGINS")
    disabled = _names_from_env("VIEWFINDER_DISABLE_PLUGINS") or set()
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        name = entry_point.name
        if (allowed is not None and name not in allowed) or name in disabled:
            manager.set_blocked(name)
            continue
        if manager.get_plugin(name) is not None or manager.is_blocked(name):
            continue
        try:
            plugin = entry_point.load()
        except Exception as exc:  # any import error in third-party code
            raise PluginError(
                f"plugin {name!r} ({entry_point.value}) failed to import: {exc!r}. "
                f"Fix or uninstall it, or skip it with VIEWFINDER_DISABLE_PLUGINS={name}"
            ) from exc
        register_plugin(plugin, name=name, manager=manager, check=False)
        if entry_point.dist is not None:
            _distributions[name] = (entry_point.dist.name, entry_point.dist.version)
    check_plugins(manager)


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with every installed plugin loaded (once)."""
    global _manager
    if _manager is not None:
        return _manager
    with _lock:
        if _manager is None:
            manager = pluggy.PluginManager(hookspecs.PROJECT)
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

    An observer that raises is logged and skipped; the capture and the other observers
    go on.
    """
    caller = get_plugin_manager().hook.viewfinder_screenshot_captured
    arguments = {"screenshot": screenshot, "context": context}
    for impl in reversed(caller.get_hookimpls()):
        try:
            impl.function(*(arguments[name] for name in impl.argnames))
        except Exception:  # observers must never break the capture
            log.exception("screenshot observer %r raised; ignored", impl.plugin_name)
