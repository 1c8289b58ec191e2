"""``viewfinder tui``: the terminal workspace, from the command line.

Only the ``viewfinder_register_commands`` hook imports this module, so typer stays out
of every other import of the package.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from viewfinder.tui.config import default_config_path, load_config

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="Configuration file (TOML); default ~/.config/viewfinder/config.toml if it exists.",
        dir_okay=False,
    ),
]


def tui_command(
    config: ConfigOption = None,
    show_config: Annotated[
        bool,
        typer.Option("--show-config", help="Print the settings in effect as JSON and exit."),
    ] = False,
) -> None:
    """Watch and drive processes, a browser and a virtual screen in the terminal.

    Type !help in the app for its commands. Ctrl+Q quits and cleans up everything.
    """
    settings = load_config(config)  # a ConfigError names the file and the key
    if show_config:
        source = config or default_config_path()
        typer.echo(f"# from {source}" + ("" if source.exists() else " (not found: defaults)"))
        typer.echo(settings.model_dump_json(indent=2))
        return
    from viewfinder.tui.running import run_tui  # textual only when the app really runs

    asyncio.run(run_tui(settings))


def register(app: typer.Typer) -> None:
    """Add ``tui`` to the root ``viewfinder`` command."""
    app.command("tui")(tui_command)
