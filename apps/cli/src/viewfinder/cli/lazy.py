"""Sub-commands registered by name and imported only when they run.

``viewfinder --help`` lists every command of every installed package; importing them
all to do that would pull in their dependencies (textual, fastapi, pydantic models...)
and take over a second. A package registers a command by the import path of what
defines it, with the one-line help the listing shows; the module is imported when
the command (or its own ``--help``) runs.

In a plugin::

    @hookimpl
    def viewfinder_register_commands(app):
        app.add_lazy_typer("cache", "viewfinder.cache.cli:cache_app", help="Build and replay ...")
        app.add_lazy_command("exec", "viewfinder.codeenv.exec_command:exec_file", help="Run ...")

``app.add_typer(...)`` and ``app.command(...)`` work as with any Typer app (imported
at once). Two plugins that register the same command name are an error naming both.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import typer
from typer.core import TyperCommand, TyperGroup

from viewfinder.core.errors import PluginError

#: Who registers the commands of the ``viewfinder`` command itself.
BUILT_IN = "viewfinder-cli"


@dataclass(frozen=True)
class LazySpec:
    """A command known by name, help and import path, not imported yet."""

    name: str
    target: str  # "package.module:attribute"
    kind: Literal["typer", "command"]
    help: str
    plugin: str

    def resolve(self) -> Any:
        module_name, _, attribute = self.target.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            raise PluginError(
                f"command {self.name!r} of plugin {self.plugin!r} cannot be loaded from "
                f"{self.target!r}: {exc!r}; reinstall the plugin, or skip it with "
                f"VIEWFINDER_DISABLE_PLUGINS={self.plugin}"
            ) from exc


def build_command(spec: LazySpec) -> Any:
    """The click command of ``spec``, built as Typer builds a sub-command added eagerly."""
    target = spec.resolve()
    holder = typer.Typer()
    if spec.kind == "typer":
        holder.add_typer(target if isinstance(target, typer.Typer) else target(), name=spec.name)
    else:
        holder.command(spec.name)(target)
    return typer.main.get_group(holder).commands[spec.name]


class LazyCommand(TyperCommand):
    """Stands in for a command in the listing; loads the real one when it is invoked."""

    def __init__(self, spec: LazySpec) -> None:
        super().__init__(spec.name, help=spec.help, add_help_option=False)
        self.spec = spec
        self._loaded: Any = None

    def load(self) -> Any:
        """The real command (imported once)."""
        if self._loaded is None:
            self._loaded = build_command(self.spec)
        return self._loaded

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        # the context (and so everything run in it) belongs to the real command
        return self.load().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Any) -> Any:
        return self.load().invoke(ctx)


class LazyGroup(TyperGroup):
    """The root group: its lazy commands join the ones Typer built."""

    lazy_commands: ClassVar[Sequence[LazySpec]] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for spec in self.lazy_commands:
            self.commands.setdefault(spec.name, LazyCommand(spec))


class CommandRegistry(typer.Typer):
    """The root Typer app handed to ``viewfinder_register_commands``.

    Adds :meth:`add_lazy_typer` and :meth:`add_lazy_command`, and refuses a command
    name that another plugin registered already.
    """

    def __init__(self, *, cls: type[LazyGroup], **kwargs: Any) -> None:
        self._lazy: list[LazySpec] = []
        # the group class Typer builds reads the lazy commands from here
        group_cls = type(cls.__name__, (cls,), {"lazy_commands": self._lazy})
        super().__init__(cls=group_cls, **kwargs)
        self._owners: dict[str, str] = {}
        #: The plugin whose hook implementation is registering commands now.
        self.current_plugin = BUILT_IN

    def claim(self, name: str) -> None:
        """Record that the current plugin adds ``name``; :class:`PluginError` on a clash."""
        owner = self._owners.get(name)
        if owner is not None:
            raise PluginError(
                f"plugin {self.current_plugin!r} adds a command {name!r}, which plugin "
                f"{owner!r} already adds; rename one of them (see docs/plugins.md), or "
                f"skip one with VIEWFINDER_DISABLE_PLUGINS"
            )
        self._owners[name] = self.current_plugin

    def add_lazy_typer(self, name: str, target: str, *, help: str) -> None:
        """Add sub-command group ``name``: ``target`` ("module:attr") is a Typer app or a
        function returning one, imported when the group runs."""
        self._add_lazy(name, target, "typer", help)

    def add_lazy_command(self, name: str, target: str, *, help: str) -> None:
        """Add command ``name``: ``target`` ("module:function") is its Typer command
        function, imported when the command runs."""
        self._add_lazy(name, target, "command", help)

    def _add_lazy(
        self, name: str, target: str, kind: Literal["typer", "command"], help: str
    ) -> None:
        if ":" not in target:
            raise PluginError(
                f"command {name!r} of plugin {self.current_plugin!r}: target {target!r} "
                "is not 'package.module:attribute'"
            )
        self.claim(name)
        self._lazy.append(LazySpec(name, target, kind, help, self.current_plugin))

    def add_typer(self, typer_instance: typer.Typer, *args: Any, **kwargs: Any) -> None:
        name = kwargs.get("name") or typer_instance.info.name
        if isinstance(name, str):
            self.claim(name)
        super().add_typer(typer_instance, *args, **kwargs)

    def command(self, name: str | None = None, *args: Any, **kwargs: Any) -> Callable[..., Any]:
        register = super().command(name, *args, **kwargs)

        def claim_and_register(function: Callable[..., Any]) -> Any:
            self.claim(name or function.__name__.replace("_", "-"))
            return register(function)

        return claim_and_register

    @property
    def lazy_specs(self) -> tuple[LazySpec, ...]:
        """The lazily registered commands, in registration order."""
        return tuple(self._lazy)
