"""``viewfinder capture``: one screenshot through any backend."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from viewfinder.cli.options import BackendName, BackendOptions, JsonOutput, parse_backend_options
from viewfinder.core import Region, get_backend
from viewfinder.core.imaging import normalize_format


def _region(value: str | None) -> Region | None:
    return Region.parse(value) if value else None


def capture_command(
    backend: BackendName = None,
    region: Annotated[
        str | None,
        typer.Option("--region", "-r", help="Only this rectangle: X,Y,WIDTH,HEIGHT."),
    ] = None,
    window: Annotated[
        str | None,
        typer.Option("--window", "-w", help="Only this window, by X id (decimal or 0x hex)."),
    ] = None,
    image_format: Annotated[str, typer.Option("--format", "-f", help="png, jpeg or webp.")] = "png",
    quality: Annotated[
        int | None,
        typer.Option("--quality", "-q", min=1, max=100, help="Quality for jpeg and webp."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="File to write ('-' for stdout); default "
            "capture-<time>.<ext> in the current folder.",
        ),
    ] = None,
    display: Annotated[
        str | None, typer.Option("--display", "-d", help="X display to capture, e.g. :1.")
    ] = None,
    url: Annotated[str | None, typer.Option("--url", help="Page to open (cdp backend).")] = None,
    option: BackendOptions = None,
    as_json: JsonOutput = False,
) -> None:
    """Capture one screenshot and write it to a file."""
    try:
        fmt = normalize_format(image_format)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--format") from exc
    try:
        window_id = int(window, 0) if window is not None else None
    except ValueError as exc:
        raise typer.BadParameter(f"{window!r} is not a window id", param_hint="--window") from exc
    options = parse_backend_options(option)
    if display is not None:
        options["display"] = display
    if url is not None:
        options["url"] = url
    started = time.perf_counter()
    with get_backend(backend, **options) as instance:
        shot = instance.capture(
            region=_region(region), window=window_id, format=fmt, quality=quality
        )
    elapsed_ms = (time.perf_counter() - started) * 1000
    if output is not None and str(output) == "-":
        sys.stdout.buffer.write(shot.data)
        sys.stdout.buffer.flush()
        return
    path = shot.save(output or Path(f"capture-{shot.captured_at:%Y%m%d-%H%M%S}.{shot.extension}"))
    if as_json:
        info = shot.model_dump(mode="json", exclude={"data"})
        info.update(path=str(path), bytes=len(shot.data), elapsed_ms=round(elapsed_ms, 2))
        typer.echo(json.dumps(info, indent=2))
    else:
        typer.echo(
            f"{path}  {shot.width}x{shot.height} {shot.format} {len(shot.data)} bytes "
            f"via {shot.source} in {elapsed_ms:.0f} ms"
        )
