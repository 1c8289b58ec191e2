"""``viewfinder exec FILE.py``: run a file in a fresh code env; keep its output and captures."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from viewfinder.codeenv.config import CodeEnvConfig
from viewfinder.codeenv.displays import FreshDisplays
from viewfinder.codeenv.environment import CodeEnvironment
from viewfinder.codeenv.errors import ScriptFileError
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


#: What a run writes in its --out folder; all of it goes before the next run writes.
_OUTPUTS = ("stdout.txt", "stderr.txt", "capture-*.png", "video-*.mp4", "run.json")


def exec_file(
    file: Annotated[
        Path,
        typer.Argument(exists=True, dir_okay=False, readable=True, help="The Python file to run."),
    ],
    args: Annotated[
        list[str] | None,
        typer.Argument(help="Arguments for the file (sys.argv[1:]); put them after --."),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Folder for stdout.txt, stderr.txt, the PNGs, videos and run.json."
        ),
    ] = Path("exec-output"),
    env_vars: Annotated[
        list[str] | None,
        typer.Option("--env", "-e", help="Set an environment variable for the file: K=V."),
    ] = None,
    size: Annotated[str, typer.Option("--size", help="Display size, WIDTHxHEIGHT.")] = "1280x800",
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds the file may run.")
    ] = 60.0,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary instead of lines.")
    ] = False,
) -> None:
    """Run FILE in a fresh code env on a virtual display; capture_screenshot() works inside.

    The file runs as ``python FILE ARGS...`` would run it: ``sys.argv``, ``__file__`` and
    ``sys.path[0]`` name it (files beside it are reachable), piped standard input is its
    ``sys.stdin``. Writes OUT/stdout.txt, OUT/stderr.txt, OUT/capture-001.png, -002,
    ... (one per capture, in order), OUT/video-001.mp4, ... (one per start_recording())
    and OUT/run.json (this summary), replacing what an earlier run wrote there. Exits
    with the code's exit status.
    """
    width, height = parse_size(size)
    environment = _environment(env_vars or [])
    source = _source(file)
    stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    out = output_folder(out)  # before running: a result must not be lost for want of a folder
    for pattern in _OUTPUTS:
        for old in out.glob(pattern):
            old.unlink()  # a rerun must not leave output of an earlier run beside its own
    # a run killed before its end leaves these (the texts empty: they come at the end),
    # and its videos as far as they got
    for name in ("stdout.txt", "stderr.txt"):
        (out / name).write_bytes(b"")
    _write_summary(out, {"file": str(file), "status": "running"})
    # your own script, run like python: it sees your files and the network, as python would.
    # Videos are recorded straight into OUT (as video-step1-N.mp4, fragmented MP4):
    # a kill of this process at any moment leaves them playable where the viewer looks.
    config = CodeEnvConfig(
        width=width, height=height, timeout_s=timeout, isolation=False,
        video_dir=str(out), video_inline_bytes=0,
    )  # fmt: skip
    code = _as_script(file.resolve(), source, args or [], environment, stdin)
    videos: list[dict[str, Any]] = []
    # the display is this command's alone, held by its main thread: killed with it
    displays = FreshDisplays(width, height, die_with_owner=True)
    with CodeEnvironment(config, displays=displays) as env:
        env.reset()
        observation = env.step(CodeAction(code=code))
        for number, video in enumerate(observation.videos, start=1):
            path = out / f"video-{number:03d}.mp4"
            os.replace(video.path, path)  # finished: it gets its final name
            fields = video.model_dump(mode="json", exclude={"data", "path"})
            videos.append({"path": str(path), **fields})
    (out / "stdout.txt").write_text(observation.stdout, encoding="utf-8")
    (out / "stderr.txt").write_text(observation.stderr, encoding="utf-8")
    captures = []
    for number, shot in enumerate(observation.screenshots, start=1):
        path = out / f"capture-{number:03d}.png"
        path.write_bytes(base64.b64decode(shot))
        captures.append(str(path))
    summary: dict[str, Any] = {
        "file": str(file),
        "status": "exited",
        "exit_code": observation.exit_code,
        "stdout": str(out / "stdout.txt"),
        "stderr": str(out / "stderr.txt"),
        "captures": captures,
        "videos": videos,
    }
    _write_summary(out, summary)
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        shown = f", {len(videos)} video(s)" if videos else ""
        typer.echo(f"{file}: exit code {observation.exit_code}, {len(captures)} capture(s){shown}")
        for path_text in [*captures, *(video["path"] for video in videos)]:
            typer.echo(f"  {path_text}")
        typer.echo(f"  {summary['stdout']}\n  {summary['stderr']}")
    raise typer.Exit(observation.exit_code if 0 <= observation.exit_code < 256 else 1)


def _write_summary(out: Path, summary: dict[str, Any]) -> None:
    """``run.json``, replaced whole (a reader never sees half of it)."""
    partial = out / ".run.json.partial"
    partial.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, out / "run.json")


def _environment(pairs: list[str]) -> dict[str, str]:
    environment = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or "\0" in pair:
            raise typer.BadParameter(f"{pair!r} is not NAME=VALUE", param_hint="--env")
        environment[name] = value
    return environment


def _source(file: Path) -> str:
    data = file.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScriptFileError(
            f"{file} is not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); "
            "save it as UTF-8 (Python reads source files as UTF-8)"
        ) from None


def _as_script(
    path: Path, source: str, args: list[str], environment: dict[str, str], stdin: bytes | None
) -> str:
    """Step code that runs ``source`` as Python runs a script file."""
    # compiled under the file's own name, so tracebacks and inspect show its lines
    return (
        "def _viewfinder_run_script():\n"
        "    import io, os, sys\n"
        "    del globals()['_viewfinder_run_script']\n"
        f"    sys.argv = {[str(path), *args]!r}\n"
        f"    sys.path.insert(0, {str(path.parent)!r})\n"
        f"    os.environ.update({environment!r})\n"
        f"    stdin = {stdin!r}\n"
        "    if stdin is not None:\n"
        "        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding='utf-8')\n"
        f"    return compile({source!r}, {str(path)!r}, 'exec')\n"
        f"__file__ = {str(path)!r}\n"
        "exec(_viewfinder_run_script())\n"
    )


def register(app: Any) -> None:
    """Add ``exec`` to the root command."""
    app.command("exec")(exec_file)
