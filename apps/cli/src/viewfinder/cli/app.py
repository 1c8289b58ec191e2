"""The root ``viewfinder`` command: wiring only.

Core commands come from their own modules; every installed package adds its own
sub-commands through the ``viewfinder_register_commands`` hook. Commands are
registered by import path and imported only when they run (:mod:`viewfinder.cli.lazy`),
so ``viewfinder --help`` and ``--version`` import none of the packages.
"""

from __future__ import annotations

import logging
import signal
from importlib import metadata
from typing import Annotated, Any

import typer

from viewfinder.cli.lazy import BUILT_IN, CommandRegistry, LazyGroup
from viewfinder.core.errors import ViewfinderError
from viewfinder.core.plugins import hook_per_plugin, plugin_infos

log = logging.getLogger(__name__)

#: Exit status of a command that failed on a viewfinder error (bad input, missing tool...).
EXIT_ERROR = 1


class ViewfinderGroup(LazyGroup):
    """Turns viewfinder errors anywhere below into one clear line and exit status 1."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except ViewfinderError as exc:
            typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
            raise typer.Exit(EXIT_ERROR) from exc


#: Distributions that --version always reports, whether or not they carry a plugin.
_ALWAYS_LISTED = ("viewfinder", "viewfinder-cli", "viewfinder-core")


def _versions() -> list[tuple[str, str]]:
    # The plugin manager has already found every plugin's distribution; asking for
    # these few by name is much cheaper than reading the metadata of every installed one.
    names = set(_ALWAYS_LISTED)
    names.update(info.distribution for info in plugin_infos() if info.distribution)
    found = []
    for name in names:
        if name == "viewfinder" or name.startswith("viewfinder-"):
            try:
                found.append((name, metadata.version(name)))
            except metadata.PackageNotFoundError:
                continue
    return sorted(found)


def _print_version(value: bool) -> None:
    if not value:
        return
    versions = dict(_versions())
    main = versions.get("viewfinder-cli", "unknown")
    typer.echo(f"viewfinder {main}")
    for name, version in versions.items():
        typer.echo(f"  {name} {version}")
    raise typer.Exit()


def build_app() -> CommandRegistry:
    """Build the ``viewfinder`` command with every installed plugin's sub-commands."""
    app = CommandRegistry(
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

    app.add_lazy_command("capture", "viewfinder.cli.capture:capture_command", help=CAPTURE_HELP)
    app.add_lazy_command("backends", "viewfinder.cli.backends:backends_command", help=BACKENDS_HELP)
    app.add_lazy_command("plugins", "viewfinder.cli.plugins:plugins_command", help=PLUGINS_HELP)
    app.add_lazy_command("elements", "viewfinder.cli.elements:elements_command", help=ELEMENTS_HELP)
    register_plugin_commands(app)
    return app


CAPTURE_HELP = "Capture one screenshot and write it to a file."
BACKENDS_HELP = "List the capture backends, whether each is available, and why not."
PLUGINS_HELP = "List the installed plugins and the hooks they implement."
ELEMENTS_HELP = "Print the accessibility tree of an X display's apps or of a page."


def register_plugin_commands(app: CommandRegistry) -> None:
    """Call each plugin's ``viewfinder_register_commands`` in turn, through pluggy.

    One plugin at a time, so that a command name two plugins claim names both.
    """
    for plugin, hook in hook_per_plugin("viewfinder_register_commands"):
        app.current_plugin = plugin
        try:
            hook(app=app)
        except ViewfinderError:
            raise
        except Exception as exc:  # one plugin's bug must not take the command down
            log.warning(
                "plugin %r raised %r while adding its commands; they are left out",
                plugin,
                exc,
            )
    app.current_plugin = BUILT_IN


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # the status a shell reports for a killed command


def _exit_cleanly_on_signals() -> None:
    """SIGTERM and SIGHUP end a command as Ctrl-C does: its cleanup runs.

    By default Python dies on them at once, and a command's browsers, displays and
    temporary folders would be left behind (a closed terminal sends SIGHUP).
    """
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _exit_on_signal)


def main() -> None:
    """Entry point of the ``viewfinder`` console script."""
    # Warnings of the library (a plugin that failed to import, ...) reach the user once,
    # on stderr, as one line each.
    logging.basicConfig(format="%(levelname)s: %(message)s", level=logging.WARNING)
    _exit_cleanly_on_signals()
    try:
        app = build_app()
    except ViewfinderError as exc:  # a misconfigured plugin: say which, no traceback
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        raise SystemExit(EXIT_ERROR) from exc
    app()
