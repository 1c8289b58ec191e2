"""``viewfinder capture``: one screenshot through any backend."""

from __future__ import annotations

import itertools
import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from viewfinder.cli.options import BackendName, BackendOptions, JsonOutput, parse_backend_options
from viewfinder.core import Region, get_backend
from viewfinder.core.imaging import normalize_format

#: What ``-o`` may end with, and the format each means.
EXTENSIONS = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp"}


def _format_for(output: Path | None, requested: str | None) -> str:
    """The image format: from ``--format``, else ``-o``'s extension, else PNG."""
    fmt = None
    if requested is not None:
        try:
            fmt = normalize_format(requested)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--format") from exc
    if output is None or str(output) == "-" or output.is_dir() or not output.suffix:
        return fmt or "png"  # a name without an extension gets the format's
    implied = EXTENSIONS.get(output.suffix.lower())
    if implied is None:
        raise typer.BadParameter(
            f"{output.name!r} does not end with an image extension; use one of "
            f"{', '.join(EXTENSIONS)} (the format follows it), or '-' for stdout",
            param_hint="--output",
        )
    if fmt is not None and fmt != implied:
        raise typer.BadParameter(
            f"--format {requested} contradicts {output.name!r}, a {implied} file name; "
            "drop --format or change the extension",
            param_hint="--format",
        )
    return implied


def default_output(extension: str, folder: Path | None = None) -> Path:
    """``capture-<date>-<time>.<ms>.<ext>`` in ``folder``: never the name of a file there."""
    folder = folder or Path()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S.%f")[:-3]
    for counter in itertools.count(1):
        suffix = "" if counter == 1 else f"-{counter}"
        candidate = folder / f"capture-{stamp}{suffix}.{extension}"
        if not candidate.exists():
            return candidate
    raise AssertionError("unreachable")  # pragma: no cover


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
    image_format: Annotated[
        str | None,
        typer.Option(
            "--format", "-f", help="png, jpeg or webp; default: from -o's extension, else png."
        ),
    ] = None,
    quality: Annotated[
        int | None,
        typer.Option("--quality", "-q", min=1, max=100, help="Quality for jpeg and webp."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="File to write (.png, .jpg/.jpeg or .webp; '-' for stdout); default "
            "capture-<date>-<time>.<ms>.<ext> in the current folder, never overwriting.",
        ),
    ] = None,
    display: Annotated[
        str | None, typer.Option("--display", "-d", help="X display to capture, e.g. :1.")
    ] = None,
    url: Annotated[str | None, typer.Option("--url", help="Page to open (cdp backend).")] = None,
    option: BackendOptions = None,
    as_json: JsonOutput = False,
) -> None:
    """Capture one screenshot and write it to a file.

    Without --backend: the X display in DISPLAY (or --display); a page only when asked
    for (--backend cdp, or --url).
    """
    fmt = _format_for(output, image_format)
    region_value = None if region is None else Region.parse(region)
    try:
        window_id = int(window, 0) if window is not None else None
    except ValueError as exc:
        raise typer.BadParameter(f"{window!r} is not a window id", param_hint="--window") from exc
    options = parse_backend_options(option)
    if display is not None:
        options["display"] = display
    if url is not None:
        options["url"] = url
        backend = backend or "cdp"
    started = time.perf_counter()
    with get_backend(backend, **options) as instance:
        shot = instance.capture(region=region_value, window=window_id, format=fmt, quality=quality)
        # where the frame came from: the X display (and how it was read), or the page
        origin = {
            key: value
            for key, value in (
                ("display", getattr(instance, "display_name", None)),
                ("grab", getattr(instance, "grab_path", None)),
                ("url", url),
            )
            if value is not None
        }
    elapsed_ms = (time.perf_counter() - started) * 1000
    if output is not None and str(output) == "-":
        sys.stdout.buffer.write(shot.data)
        sys.stdout.buffer.flush()
        return
    if output is None or output.is_dir():
        output = default_output(shot.extension, output)
    path = shot.save(output)
    if as_json:
        info = shot.model_dump(mode="json", exclude={"data"})
        info.update(origin, path=str(path), bytes=len(shot.data), elapsed_ms=round(elapsed_ms, 2))
        typer.echo(json.dumps(info, indent=2))
    else:
        typer.echo(
            f"{path}  {shot.width}x{shot.height} {shot.format} {len(shot.data)} bytes "
            f"via {shot.source}{''.join(f' {k}={v}' for k, v in origin.items())} "
            f"in {elapsed_ms:.0f} ms"
        )
