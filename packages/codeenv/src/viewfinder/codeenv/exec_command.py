"""``viewfinder exec FILE.py``: run a file in a fresh code env; keep its output and captures."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from viewfinder.codeenv.config import CodeEnvConfig
from viewfinder.codeenv.displays import FreshDisplays
from viewfinder.codeenv.environment import CodeEnvironment
from viewfinder.codeenv.models import CodeAction
from viewfinder.core.files import output_folder


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x800"`` to ``(1280, 800)``; a clear error for anything else."""
    width, sep, height = text.lower().partition("x")
    try:
        size = (int(width), int(height))
    except ValueError:
        size = (0, 0)
    if not sep or min(size) <= 0:
        raise typer.BadParameter(
            f"{text!r} is not WIDTHxHEIGHT (e.g. 1280x800)", param_hint="--size"
        )
    return size


def exec_file(
    file: Annotated[
        Path,
        typer.Argument(exists=True, dir_okay=False, readable=True, help="The Python file to run."),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for stdout.txt, stderr.txt and the PNGs.")
    ] = Path("exec-output"),
    size: Annotated[str, typer.Option("--size", help="Display size, WIDTHxHEIGHT.")] = "1280x800",
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds the file may run.")
    ] = 60.0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary instead of lines.")
    ] = False,
) -> None:
    """Run FILE in a fresh code env on a virtual display; capture_screenshot() works inside.

    Writes OUT/stdout.txt, OUT/stderr.txt and OUT/capture-001.png, -002, ... (one per
    capture, in order). Exits with the code's exit status.
    """
    width, height = parse_size(size)
    out = output_folder(out)  # before running: a result must not be lost for want of a folder
    config = CodeEnvConfig(width=width, height=height, timeout_s=timeout)
    with CodeEnvironment(config, displays=FreshDisplays(width, height)) as env:
        env.reset()
        observation = env.step(CodeAction(code=file.read_text(encoding="utf-8")))
    for old in out.glob("capture-*.png"):
        old.unlink()  # a rerun must not leave captures of an earlier run beside its own
    (out / "stdout.txt").write_text(observation.stdout, encoding="utf-8")
    (out / "stderr.txt").write_text(observation.stderr, encoding="utf-8")
    captures = []
    for number, shot in enumerate(observation.screenshots, start=1):
        path = out / f"capture-{number:03d}.png"
        path.write_bytes(base64.b64decode(shot))
        captures.append(str(path))
    summary: dict[str, Any] = {
        "file": str(file),
        "exit_code": observation.exit_code,
        "stdout": str(out / "stdout.txt"),
        "stderr": str(out / "stderr.txt"),
        "captures": captures,
    }
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        typer.echo(f"{file}: exit code {observation.exit_code}, {len(captures)} capture(s)")
        for path_text in captures:
            typer.echo(f"  {path_text}")
        typer.echo(f"  {summary['stdout']}\n  {summary['stderr']}")
    raise typer.Exit(observation.exit_code if 0 <= observation.exit_code < 256 else 1)


def register(app: Any) -> None:
    """Add ``exec`` to the root command."""
    app.command("exec")(exec_file)
