"""``viewfinder plugins``: installed plugins and the hooks each implements."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer

from viewfinder.cli.options import JsonOutput
from viewfinder.core import plugin_infos


def plugins_command(as_json: JsonOutput = False) -> None:
    """List the installed plugins and the hooks they implement."""
    infos = plugin_infos()
    if as_json:
        typer.echo(json.dumps([asdict(info) for info in infos], indent=2))
        return
    for info in infos:
        origin = f"{info.distribution} {info.version}" if info.distribution else "in-process"
        hooks = ", ".join(info.hooks) or "(no hooks)"
        typer.echo(f"{info.name}  [{origin}]\n    {hooks}")


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins_command)
