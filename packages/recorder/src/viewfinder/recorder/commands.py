"""``viewfinder record``: record a session, show one, export one.

Imported only by the plugin's ``viewfinder_register_commands`` hook, so the recorder
works without typer.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from viewfinder.core import Event
from viewfinder.recorder.ai_mime import to_ai_mime
from viewfinder.recorder.recorder import Recorder
from viewfinder.recorder.session import load_session, read_session
from viewfinder.recorder.sources import make_input_source

#: Exit status when the recording stopped on an error (display gone, disk full).
EXIT_FAILED = 1


class ExportFormat(StrEnum):
    trajectory = "trajectory"
    ai_mime = "ai-mime"


def describe(event: Event) -> str:
    """One readable line for an event: ``click (120, 48)``, ``type 'hello'``, ``key ctrl+s``,
    ``click (70, 90) on push button 'Save'`` (the element under a pointer action)."""
    kind = event.kind.value
    where = f" ({event.position.x}, {event.position.y})" if event.position else ""
    if event.text:
        return f"{kind} {event.text!r}"
    if event.keys:
        return f"{kind} {'+'.join(event.keys)}"
    if event.start_position is not None and event.position is not None:
        start, end = event.start_position, event.position
        return f"{kind} ({start.x}, {start.y}) -> ({end.x}, {end.y}){_on_element(event)}"
    if event.scroll_dx or event.scroll_dy:
        return f"{kind}{where} dx={event.scroll_dx} dy={event.scroll_dy}{_on_element(event)}"
    mods = f" with {'+'.join(event.modifiers)}" if event.modifiers else ""
    return f"{kind}{where}{mods}{_on_element(event)}"


def _on_element(event: Event) -> str:
    return f" on {event.element.describe()}" if event.element is not None else ""


def record_command(
    ctx: typer.Context,
    display: Annotated[
        str | None,
        typer.Option("--display", "-d", help="X display to record, e.g. :1 (xvfb backend)."),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            "-b",
            help="Capture backend (default: xvfb with --display, "
            "else $VIEWFINDER_BACKEND or the best available).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Session folder (default ./recording-<time>)."),
    ] = None,
    interval: Annotated[
        float, typer.Option("--interval", min=0.01, help="Seconds between live frame refreshes.")
    ] = 0.5,
    resume: Annotated[
        bool, typer.Option("--resume", help="Add to the recording already in --out.")
    ] = False,
    input_name: Annotated[
        str, typer.Option("--input", help="Input source: auto, x11 or programmatic.")
    ] = "auto",
    duration: Annotated[
        float | None, typer.Option("--duration", min=0, help="Stop after this many seconds.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not print each event.")] = False,
    no_elements: Annotated[
        bool,
        typer.Option(
            "--no-elements",
            help="Do not look up the element under each pointer action (by default it is "
            "looked up when the display has an accessibility bus).",
        ),
    ] = False,
    video: Annotated[
        bool,
        typer.Option(
            "--video",
            help="Also record the screen to an MP4 beside the manifest (videos/N.mp4 for "
            "run N; needs ffmpeg and an X display: --display or $DISPLAY).",
        ),
    ] = False,
) -> None:
    """Record actions with the screenshot taken just before each; Ctrl-C stops."""
    if ctx.invoked_subcommand is not None:
        return
    folder = out or Path(f"recording-{datetime.now():%Y%m%d-%H%M%S}")
    video_display = display or os.environ.get("DISPLAY")
    if video and not video_display:
        raise typer.BadParameter(
            "a video records an X display: give --display :N (or set $DISPLAY)",
            param_hint="--video",
        )
    source = make_input_source(input_name, display)
    options: dict[str, Any] = {"display": display} if display else {}
    chosen = backend or ("xvfb" if display else None)

    def print_event(seq: int, event: Event) -> None:
        if not quiet:
            typer.echo(f"  #{seq:<4} {describe(event):<40} {event.screenshot}")

    recorder = Recorder(
        folder,
        chosen,
        backend_options=options,
        input_source=source,
        interval=interval,
        resume=resume,
        on_event=print_event,
        elements=not no_elements,
    )
    screen_video = None
    if video:
        from viewfinder.recorder.video import SessionVideo

        assert video_display is not None
        screen_video = SessionVideo(recorder.layout, video_display)  # ffmpeg checked first
    recorder.start()
    if screen_video is not None:
        try:
            screen_video.start()
        except BaseException:
            recorder.stop()
            raise
    shown = f" on {display}" if display else ""
    filmed = f", video {screen_video.path}" if screen_video is not None else ""
    named = f", elements from {recorder.element_source}" if recorder.element_source else ""
    typer.echo(
        f"recording {recorder.backend.name}{shown} into {recorder.layout.root} (input: "
        f"{source.name}, frame every {interval:g} s{filmed}{named}); press Ctrl-C to stop"
    )
    _wait_for_stop(recorder, duration)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not
    try:  # cut the final writes short
        summary = recorder.stop()
        info = screen_video.stop() if screen_video is not None else None
    finally:
        if screen_video is not None:
            screen_video.kill()  # only if stopping failed: a finished video is left alone
        signal.signal(signal.SIGINT, previous)
    typer.echo(str(summary))
    if info is not None:
        typer.echo(f"video: {info.path} ({info.duration_s:.1f} s, {info.frames} frames)")
    if summary.error:
        typer.secho(f"error: {summary.error}", err=True, fg=typer.colors.RED)
        raise typer.Exit(EXIT_FAILED)


def _wait_for_stop(recorder: Recorder, duration: float | None) -> None:
    stop = threading.Event()
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set()) if in_main else None
    deadline = time.monotonic() + duration if duration is not None else None
    try:
        while not recorder.wait(0.1) and not stop.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                break
    except KeyboardInterrupt:
        pass
    finally:
        if in_main and previous is not None:
            signal.signal(signal.SIGTERM, previous)


def show_command(
    session: Annotated[Path, typer.Argument(help="A recording's folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead.")] = False,
) -> None:
    """List a recording's events with their frames."""
    found = read_session(session)
    rows = []
    start = found.metadata.started_at
    for entry in found.entries:
        path = found.frame_path(entry)
        rows.append(
            {
                "seq": entry.seq,
                "t": round((entry.event.timestamp - start).total_seconds(), 3),
                "kind": entry.event.kind.value,
                "action": describe(entry.event),
                "frame": str(path) if path else None,
                "frame_exists": bool(path and path.is_file()),
                "element": entry.event.element.model_dump(mode="json", exclude_defaults=True)
                if entry.event.element is not None
                else None,
            }
        )
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row))
        return
    meta = found.metadata
    typer.echo(
        f"{found.root}: {meta.screen.width}x{meta.screen.height} via {meta.backend}, input "
        f"{meta.input_source}, {len(rows)} events, {meta.status}"
        + (f" ({meta.error})" if meta.error else "")
    )
    if meta.status == "recording":
        typer.echo("  (not stopped cleanly, or still recording; every line below is whole)")
    typer.echo(f"{'seq':>5}  {'t(s)':>8}  {'action':<40}  frame")
    for row in rows:
        mark = "" if row["frame_exists"] else "  (missing)"
        typer.echo(f"{row['seq']:>5}  {row['t']:>8.3f}  {row['action']:<40}  {row['frame']}{mark}")


def export_command(
    session: Annotated[Path, typer.Argument(help="A recording's folder.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write ('-' for stdout).")],
    fmt: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            "-f",
            help="trajectory (core Trajectory JSON) or ai-mime "
            "(JSON lines with action_type/action_details).",
        ),
    ] = ExportFormat.trajectory,
    frames: Annotated[
        bool, typer.Option("--frames/--no-frames", help="Embed the frames (trajectory).")
    ] = True,
) -> None:
    """Export a recording as a Trajectory (JSON) or as ai_mime-style lines."""
    if fmt is ExportFormat.trajectory:
        trajectory = load_session(session, frames=frames)
        text = trajectory.model_dump_json(indent=2) + "\n"
        count = len(trajectory)
    else:
        found = read_session(session)
        lines = [json.dumps(to_ai_mime(entry.event)) for entry in found.entries]
        text = "".join(line + "\n" for line in lines)
        count = len(lines)
    if str(output) == "-":
        sys.stdout.write(text)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {count} steps to {output} ({fmt.value})")


def record_app() -> typer.Typer:
    """The ``record`` sub-command group."""
    app = typer.Typer(
        help="Record actions paired with the screenshot just before each; show and export "
        "recordings.",
        no_args_is_help=False,
    )
    app.callback(invoke_without_command=True)(record_command)
    app.command("show")(show_command)
    app.command("export")(export_command)
    return app
