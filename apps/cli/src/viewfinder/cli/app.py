"""The root ``viewfinder`` command: wiring only.

Core commands come from their own modules; every installed package adds its own
sub-commands through the ``viewfinder_register_commands`` hook.
"""

from __future__ import annotations

from importlib import metadata
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from viewfinder.cli import backends, capture, plugins
from viewfinder.core import ViewfinderError, get_plugin_manager

#: Exit status of a command that failed on a viewfinder error (bad input, missing tool...).
EXIT_ERROR = 1


class ViewfinderGroup(TyperGroup):
    """Turns viewfinder errors anywhere below into one clear line and exit status 1."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ViewfinderError as exc:
            typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
            raise typer.Exit(EXIT_ERROR) from exc


def _versions() -> list[tuple[str, str]]:
    found = []
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name == "viewfinder" or name.startswith("viewfinder-"):
            found.append((name, dist.version))
    return sorted(set(found))


def _print_version(value: bool) -> None:
    if not value:
        return
    versions = dict(_versions())
    main = versions.get("viewfinder-cli", "unknown")
    typer.echo(f"viewfinder {main}")
    for name, version in versions.items():
        typer.echo(f"  {name} {version}")
    raise typer.Exit()


def build_app() -> typer.Typer:
    """Build the ``viewfinder`` command with every installed plugin's sub-commands."""
    app = typer.Typer(
        name="viewfinder",
        cls=ViewfinderGroup,
        help="Give AI agents eyes: capture, record, validate and replay what is on screen.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        version: Annotated[
            bool,
            typer.Option(
                "--version",
                callback=_print_version,
                is_eager=True,
                help="Print the versions of the installed viewfinder packages.",
            ),
        ] = False,
    ) -> None:
        """viewfinder: screenshots for agents at the right moment."""

    capture.register(app)
    backends.register(app)
    plugins.register(app)
    get_plugin_manager().hook.viewfinder_register_commands(app=app)
    return app


def main() -> None:
    """Entry point of the ``viewfinder`` console script."""
    try:
        app = build_app()
    except ViewfinderError as exc:  # a broken plugin: say which, do not dump a traceback
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        raise SystemExit(EXIT_ERROR) from exc
    app()
