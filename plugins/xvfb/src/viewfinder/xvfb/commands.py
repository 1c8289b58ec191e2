"""``viewfinder display start | list | stop``: long-lived displays from the command line.

Only the ``viewfinder_register_commands`` hook imports this module, so typer stays
out of every other import of the plugin.
"""

from __future__ import annotations

import json
import shlex
from typing import Annotated

import typer

from viewfinder.core.errors import ViewfinderError
from viewfinder.xvfb import registry

SizeOption = Annotated[
    str, typer.Option("--size", help="Screen size as WIDTHxHEIGHT.", show_default=True)
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _parse_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not WIDTHxHEIGHT (e.g. 1280x800)") from None
    if width <= 0 or height <= 0:
        raise typer.BadParameter(f"{text!r}: width and height must be positive")
    return width, height


def _fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(code=1)


def start(
    size: SizeOption = "1280x800",
    depth: Annotated[int, typer.Option(help="Colour depth in bits.")] = 24,
    accessibility: Annotated[
        bool,
        typer.Option(
            "--accessibility",
            help="Start the display's accessibility buses with it, and print the variables "
            "apps need to publish their elements there (docs/elements.md).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Start an Xvfb display that keeps running after this command.

    Prints `export DISPLAY=:N` (and with --accessibility the buses' variables), so
    `eval "$(viewfinder display start)"` points the shell, and the apps it starts, at it.
    """
    width, height = _parse_size(size)
    try:
        record = registry.start_display(width, height, depth)
    except (ViewfinderError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    variables = {"DISPLAY": record.name}
    if accessibility:
        from viewfinder.xvfb.accessibility_bus import AccessibilityBusError
        from viewfinder.xvfb.display_buses import start_buses

        try:
            variables.update(start_buses(record.name, record.fbdir))
        except (ViewfinderError, AccessibilityBusError) as exc:
            registry.stop_display(record.number)
            raise _fail(f"{exc} (the display was stopped again)") from exc
    if as_json:
        typer.echo(json.dumps({**record.to_dict(), "env": variables}))
    else:
        for name, value in variables.items():
            typer.echo(f"export {name}={shlex.quote(value)}")


def list_(as_json: JsonOption = False) -> None:
    """List the displays started with `viewfinder display start` (dead ones are pruned)."""
    records = registry.list_displays(prune=True)
    if as_json:
        typer.echo(json.dumps([record.to_dict() for record in records]))
        return
    if not records:
        typer.echo("no displays; start one with `viewfinder display start`")
        return
    rows = [("DISPLAY", "PID", "SIZE", "ALIVE", "STARTED")]
    rows += [
        (
            record.name,
            str(record.pid),
            record.size,
            "yes" if record.is_alive() else "no",
            record.started_at,
        )
        for record in records
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        typer.echo(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )


def stop(
    display: Annotated[str | None, typer.Argument(help="The display to stop, as :N.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Stop every recorded display.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Stop a display (or --all) and remove its socket, lock file and framebuffer."""
    if all_ == (display is not None):
        raise _fail("name one display (viewfinder display stop :N) or pass --all")
    try:
        if all_:
            stopped = registry.stop_all_displays()
        else:
            assert display is not None
            stopped = [registry.stop_display(registry.parse_display_number(display))]
    except (ViewfinderError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps([record.name for record in stopped]))
    elif stopped:
        for record in stopped:
            typer.echo(f"stopped {record.name}")
    else:
        typer.echo("no displays to stop")


def display_app() -> typer.Typer:
    """The ``display`` sub-command group."""
    app = typer.Typer(
        name="display",
        help="Start, list and stop long-lived Xvfb displays.",
        no_args_is_help=True,
    )
    app.command("start")(start)
    app.command("list")(list_)
    app.command("stop")(stop)
    return app
