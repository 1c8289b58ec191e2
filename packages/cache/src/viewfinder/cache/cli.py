"""``viewfinder cache build|show|check|replay|reset``: cache files from the command line.

Exit status: 0 when all is well, 1 on bad input (printed as one line), 2 on a command
line typer cannot parse, 3 when the screen does not match (``check``) or replay stopped
for an agent (``NEEDS_AGENT``), 4 when a replayed action failed (``FAILED``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from viewfinder.cache.models import CacheFile
    from viewfinder.core.backend import CaptureBackend

# The command is built on every `viewfinder` start: numpy, PIL and the models load only
# when a cache command actually runs.

EXIT_MISMATCH = 3
EXIT_FAILED = 4
_EXIT_CODES = {"COMPLETED": 0, "NEEDS_AGENT": EXIT_MISMATCH, "FAILED": EXIT_FAILED}

CacheFileArg = Annotated[Path, typer.Argument(help="The cache file (JSON).")]
JsonOutput = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
Display = Annotated[
    str | None,
    typer.Option("--display", "-d", help="X display to check or act on, e.g. :1 (xvfb backend)."),
]
Backend = Annotated[
    str | None,
    typer.Option("--backend", "-b", help="Capture backend that can act (default: xvfb)."),
]
BackendOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-O",
        help="Backend option KEY=VALUE, repeatable (cdp_url=http://127.0.0.1:9222, url=...).",
    ),
]
Threshold = Annotated[
    int | None,
    typer.Option("--threshold", "-t", min=0, help="Max Hamming distance (overrides the file)."),
]


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in values or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"{item!r} is not NAME=VALUE", param_hint=option)
        if name.strip() in pairs:
            raise typer.BadParameter(f"{name.strip()!r} is given twice", param_hint=option)
        pairs[name.strip()] = value
    return pairs


def _value(raw: str) -> object:
    if raw.lower() in ("true", "yes", "on"):
        return True
    if raw.lower() in ("false", "no", "off"):
        return False
    try:
        return int(raw)
    except ValueError:
        return raw


def _backend(
    display: str | None, backend: str | None, pairs: list[str] | None = None
) -> CaptureBackend:
    from viewfinder.cache.errors import CacheError
    from viewfinder.core.capture import get_backend

    if display is None and backend is None:
        raise CacheError("say which screen to use: --display :N (an X display) or --backend NAME")
    options: dict[str, Any] = {
        name.replace("-", "_"): _value(value) for name, value in _pairs(pairs, "--option").items()
    }
    if display is not None:
        options["display"] = display
    try:
        return get_backend(backend or "xvfb", **options)
    except TypeError as exc:  # a backend factory that does not take an -O option
        raise CacheError(
            f"capture backend {backend or 'xvfb'!r} does not take the option(s) "
            f"{', '.join(sorted(options))}: {exc}; check the -O names"
        ) from exc


def build_command(
    source: Annotated[
        Path, typer.Argument(help="Message history JSON, Trajectory JSON or recorder session.")
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Cache file to write.")],
    method: Annotated[
        str | None, typer.Option(help="phash (default), ahash, dhash or whash.")
    ] = None,
    region_size: Annotated[
        int | None,
        typer.Option(help="Side of the square hashed around each action, in pixels [100]."),
    ] = None,
    hash_size: Annotated[int | None, typer.Option(help="Hash size [8: 64 bits].")] = None,
    threshold: Threshold = None,
    thumbnails: Annotated[
        bool,
        typer.Option(
            help="Store each hashed region's pixels (a small PNG): replays search for them "
            "where the screen changed, reports show them."
        ),
    ] = True,
    debug_thumbnails: Annotated[
        bool, typer.Option(help="Kept for older scripts: thumbnails are stored by default.")
    ] = False,
    goal: Annotated[str | None, typer.Option(help="What the trajectory does.")] = None,
    parameter: Annotated[
        list[str] | None,
        typer.Option(
            "--parameter", "-p", help="NAME=TEXT: recorded TEXT becomes {{NAME}} (repeatable)."
        ),
    ] = None,
    hashed_actions: Annotated[
        str | None,
        typer.Option(help="Comma-separated computer-use actions to hash (default: clicks, type)."),
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Build a cache file, hashing the region around each click and text entry."""
    from viewfinder.cache.recording import RecordingSettings, build_cache
    from viewfinder.cache.store import save_cache_file
    from viewfinder.core.files import output_folder

    output_folder(output.parent)  # before the build: its work must not be lost at the end

    given: dict[str, Any] = {
        "method": method,
        "region_size": region_size,
        "hash_size": hash_size,
        "threshold": threshold,
    }
    if hashed_actions:
        given["hashed_actions"] = frozenset(
            part.strip() for part in hashed_actions.split(",") if part.strip()
        )
    settings = RecordingSettings(
        thumbnails=thumbnails or debug_thumbnails,
        **{name: value for name, value in given.items() if value is not None},
    )
    cache = build_cache(source, settings, goal=goal, parameters=_pairs(parameter, "--parameter"))
    path = save_cache_file(cache, output)
    hashed = sum(1 for block in cache.trajectory if block.visual_representation)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "path": str(path),
                    "steps": len(cache.trajectory),
                    "hashed": hashed,
                    "bytes": path.stat().st_size,
                    "parameters": cache.cache_parameters,
                }
            )
        )
        return
    typer.echo(
        f"{path}: {len(cache.trajectory)} steps, {hashed} hashed ({settings.method}, "
        f"{settings.region_size} px, hash size {settings.hash_size}), "
        f"{path.stat().st_size} bytes"
    )


def show_command(file: CacheFileArg, as_json: JsonOutput = False) -> None:
    """Show a cache file's steps, hashes, parameters and validity."""
    from viewfinder.cache.actions import describe
    from viewfinder.cache.checks import effective_threshold
    from viewfinder.cache.parameters import used_parameters
    from viewfinder.cache.store import read_cache_file
    from viewfinder.cache.validity import invalidation_reason

    cache = read_cache_file(file)
    reason = cache.metadata.invalidation_reason or invalidation_reason(cache)
    valid = cache.metadata.is_valid and reason is None
    if as_json:
        typer.echo(json.dumps(_summary(file, cache, valid, reason), indent=2))
        return
    meta, visual = cache.metadata, cache.visual
    typer.echo(f"{file}  (format {cache.read_version or meta.version})")
    if meta.goal:
        typer.echo(f"goal: {meta.goal}")
    state = "valid" if valid else f"INVALID: {reason}"
    typer.echo(
        f"{state}; {meta.execution_attempts} replays, {len(meta.failures)} failures, "
        f"last run {meta.last_executed_at or 'never'}"
    )
    if visual.active:
        typer.echo(
            f"visual validation: {visual.method}, {visual.region_size} px regions, hash size "
            f"{visual.hash_size}, threshold {effective_threshold(visual, None)}"
        )
    else:
        typer.echo("visual validation: off")
    for name in used_parameters(cache):
        typer.echo(f"parameter {{{{{name}}}}}: {cache.cache_parameters.get(name, '')}")
    for index, block in enumerate(cache.trajectory):
        digest = block.visual_representation or "-"
        target = f"  on {block.visual_element.describe()}" if block.visual_element else ""
        typer.echo(f"{index:>4}  {digest:<18} {describe(block)}{target}")
    for heal in meta.heals:
        typer.echo(f"healed {heal.timestamp:%Y-%m-%d %H:%M:%S}: {heal.describe()}")


def _summary(file: Path, cache: CacheFile, valid: bool, reason: str | None) -> dict[str, Any]:
    from viewfinder.cache.actions import describe
    from viewfinder.cache.parameters import used_parameters

    return {
        "path": str(file),
        "read_version": cache.read_version,
        "valid": valid,
        "invalidation_reason": reason,
        "metadata": cache.metadata.model_dump(mode="json"),
        "parameters": {
            name: cache.cache_parameters.get(name, "") for name in used_parameters(cache)
        },
        "steps": [
            {"index": index, "action": describe(block), "hash": block.visual_representation}
            for index, block in enumerate(cache.trajectory)
        ],
    }


def check_command(
    file: CacheFileArg,
    display: Display = None,
    backend: Backend = None,
    option: BackendOptions = None,
    threshold: Threshold = None,
    start: Annotated[int, typer.Option(min=0, help="The step replay would start from.")] = 0,
    as_json: JsonOutput = False,
) -> None:
    """Compare hashed steps with the live screen, without acting; print the distances.

    Only the first hashed step from --start can be expected to match the screen as it is
    now (the later ones show the screen after earlier steps): it alone decides the exit
    status; the later ones are listed for information.
    """
    from viewfinder.cache.checks import check_steps
    from viewfinder.cache.store import read_cache_file

    cache = read_cache_file(file)
    with _backend(display, backend, option) as screen:
        checks = [c for c in check_steps(screen, cache, threshold, file) if c.index >= start]
    now = checks[0].index if checks else None
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "index": check.index,
                        "action": check.action,
                        "distance": check.distance,
                        "threshold": check.threshold,
                        "passed": check.passed,
                        "decides": check.index == now,
                        "stored_hash": check.stored_hash,
                        "live_hash": check.live_hash,
                    }
                    for check in checks
                ],
                indent=2,
            )
        )
    elif not checks:
        typer.echo(f"{file} has no hashed steps to check (visual validation is off)")
    else:
        typer.echo(f"{'step':>4}  {'distance':>8}  {'threshold':>9}  result    action")
        for check in checks:
            # a later step differing now is expected: earlier steps change the screen
            result = "ok" if check.passed else ("MISMATCH" if check.index == now else "later")
            typer.echo(
                f"{check.index:>4}  {check.distance:>8}  {check.threshold:>9}  {result:<8}  "
                f"{check.action}"
            )
    if checks and not checks[0].passed:
        raise typer.Exit(EXIT_MISMATCH)


def replay_command(
    file: CacheFileArg,
    display: Display = None,
    backend: Backend = None,
    option: BackendOptions = None,
    threshold: Threshold = None,
    skip_visual_validation: Annotated[
        bool, typer.Option(help="Replay without comparing the screen.")
    ] = False,
    parameter: Annotated[
        list[str] | None,
        typer.Option("--parameter", "-p", help="NAME=VALUE for {{NAME}} (repeatable)."),
    ] = None,
    delay: Annotated[float, typer.Option(min=0, help="Seconds to wait between actions.")] = 1.0,
    settle: Annotated[
        float,
        typer.Option(
            min=0, help="Seconds a mismatching region may take to catch up before replay stops."
        ),
    ] = 0.6,
    start: Annotated[int, typer.Option(min=0, help="Step to start from.")] = 0,
    report_dir: Annotated[
        Path | None, typer.Option(help="Write a mismatch report (HTML + PNG) here.")
    ] = None,
    allow_invalid: Annotated[bool, typer.Option(help="Replay even a file marked invalid.")] = False,
    save: Annotated[bool, typer.Option(help="Record the attempt in the file.")] = True,
    heal: Annotated[
        bool,
        typer.Option(
            help="Act on a step whose target moved where its element or picture is found "
            "with certainty (--no-heal: stop at the first mismatch)."
        ),
    ] = True,
    heal_display: Annotated[
        str | None,
        typer.Option(help="X display whose accessibility tree healing reads [the replay's]."),
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Replay a cache file, stopping before any step whose screen region has changed
    (unless its target only moved and is found again)."""
    from viewfinder.cache.executor import CacheExecutor, ExecutionSettings
    from viewfinder.cache.store import read_cache_file

    settings = ExecutionSettings(
        delay_time_between_actions=delay,
        skip_visual_validation=skip_visual_validation,
        visual_validation_threshold=threshold,
        report_dir=report_dir,
        allow_invalid=allow_invalid,
        settle_time=settle,
        heal=heal,
        heal_display=heal_display,
    )
    read_cache_file(file)  # a file that is no cache is reported before a screen is opened
    with _backend(display, backend, option) as screen:
        result = CacheExecutor(screen, settings).run(
            file, _pairs(parameter, "--parameter"), start_from_step_index=start, save=save
        )
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        typer.echo(f"{result.status.value}: {result.message}")
        for step in result.steps:
            if step.healed:
                typer.echo(f"step {step.index} healed by {step.healed}: acted at {step.healed_to}")
        if result.report is not None:
            typer.echo(f"report: {result.report}")
        if result.invalidation_reason:
            typer.echo(f"the file is now marked invalid: {result.invalidation_reason}")
        for warning in result.warnings:
            typer.echo(f"warning: {warning}", err=True)
    raise typer.Exit(_EXIT_CODES[result.status.value])


def reset_command(file: CacheFileArg) -> None:
    """Trust a cache file again: clear its failures and its invalid mark (after a fix)."""
    from viewfinder.cache.store import read_cache_file, save_cache_file
    from viewfinder.cache.validity import restore_validity

    cache = read_cache_file(file)
    failures = len(cache.metadata.failures)
    was = cache.metadata.invalidation_reason if not cache.metadata.is_valid else None
    restore_validity(cache)
    save_cache_file(cache, file)
    state = f"was invalid: {was}" if was else "was valid"
    typer.echo(f"{file}: valid again ({state}; {failures} failure(s) cleared)")


def cache_app() -> typer.Typer:
    """The ``viewfinder cache`` sub-app."""
    app = typer.Typer(
        help="Trajectory cache files: build, show, check against the screen, replay, reset.",
        no_args_is_help=True,
    )
    app.command("build")(build_command)
    app.command("show")(show_command)
    app.command("check")(check_command)
    app.command("replay")(replay_command)
    app.command("reset")(reset_command)
    return app
