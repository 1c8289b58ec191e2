"""``viewfinder plugins``: installed plugins and the hooks each implements."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer

from viewfinder.cli.options import JsonOutput
from viewfinder.core.plugins import broken_plugins, plugin_infos


def plugins_command(as_json: JsonOutput = False) -> None:
    """List the installed plugins and the hooks they implement.

    A plugin that failed to import is listed as broken, with the error; the others work.
    """
    infos = plugin_infos()
    broken = broken_plugins()
    if as_json:
        rows = [{**asdict(info), "broken": None} for info in infos]
        rows += [
            {
                "name": plugin.name,
                "distribution": plugin.distribution,
                "version": None,
                "hooks": [],
                "broken": plugin.error,
            }
            for plugin in broken
        ]
        typer.echo(json.dumps(sorted(rows, key=lambda row: str(row["name"])), indent=2))
        return
    envs = _envs_by_plugin()
    for info in infos:
        origin = f"{info.distribution} {info.version}" if info.distribution else "in-process"
        hooks = ", ".join(info.hooks) or "(no hooks)"
        typer.echo(f"{info.name}  [{origin}]\n    {hooks}")
        if info.name in envs:
            typer.echo(f"    envs: {', '.join(sorted(envs[info.name]))}")
    for plugin in broken:
        origin = plugin.distribution or "unknown distribution"
        typer.echo(f"{plugin.name}  [{origin}]  BROKEN\n    {plugin.error} ({plugin.entry_point})")


def _envs_by_plugin() -> dict[str, list[str]]:
    """The environments each plugin registered (``viewfinder serve --env NAME``)."""
    from viewfinder.core.envs import registered_envs

    found: dict[str, list[str]] = {}
    for name, entry in registered_envs().items():
        found.setdefault(entry.plugin, []).append(name)
    return found
