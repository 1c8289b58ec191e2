"""``viewfinder backends``: every capture backend and whether it can capture here."""

from __future__ import annotations

import json

import typer

from viewfinder.cli.options import JsonOutput
from viewfinder.core import backend_specs


def backends_command(as_json: JsonOutput = False) -> None:
    """List the capture backends, whether each is available, and why not."""
    rows = []
    for spec in sorted(backend_specs().values(), key=lambda s: (-s.priority, s.name)):
        availability = spec.availability()
        rows.append(
            {
                "name": spec.name,
                "plugin": spec.plugin,
                "priority": spec.priority,
                "available": availability.available,
                "reason": availability.reason,
            }
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo("no capture backends are installed (pip install viewfinder)")
        return
    width = max(len(str(row["name"])) for row in rows)
    for row in rows:
        status = "yes" if row["available"] else "no "
        reason = f"  {row['reason']}" if row["reason"] else ""
        typer.echo(f"{row['name']:<{width}}  available: {status}  (plugin {row['plugin']}){reason}")
