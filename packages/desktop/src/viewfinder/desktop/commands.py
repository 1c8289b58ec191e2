"""``viewfinder desktop start | stop | list | act``: desktops from the command line.

Only the ``viewfinder_register_commands`` hook imports this module, so typer stays out
of every other import of the package.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from viewfinder.core.errors import ViewfinderError
from viewfinder.desktop import state
from viewfinder.desktop.apps import WINDOW_TIMEOUT_S, DesktopConfigError
from viewfinder.desktop.lease import parse_size
from viewfinder.xvfb.accessibility_bus import AccessibilityBusError

#: Exit status for input the command cannot use (bad JSON, a malformed action).
EXIT_BAD_INPUT = 2
#: What ``-o`` may end with, and the image format each writes.
IMAGE_SUFFIXES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp"}

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
DisplayOption = Annotated[
    str | None,
    typer.Option("--display", "-d", help="The desktop's display, as :N (default: $DISPLAY)."),
]


def _fail(message: str, code: int = 1) -> typer.Exit:
    # one line, no traceback: the message says what was wrong and what to do
    typer.secho(f"error: {' '.join(message.split())}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=code)


def start(
    command: Annotated[
        list[str] | None,
        typer.Argument(
            help="An app to start on the desktop, with its arguments (after --).",
            show_default=False,
        ),
    ] = None,
    size: Annotated[
        str, typer.Option("--size", help="Screen size as WIDTHxHEIGHT.", show_default=True)
    ] = "1280x800",
    app: Annotated[
        list[str] | None,
        typer.Option(
            "--app",
            help="Another app to start, as one quoted command line (repeatable): "
            "--app 'python form.py --state s.json'.",
        ),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait/--no-wait",
            help="Return once every app has mapped a window (--no-wait for apps without one).",
        ),
    ] = True,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds each app has to show a window.")
    ] = WINDOW_TIMEOUT_S,
    elements: Annotated[
        bool,
        typer.Option(
            "--elements",
            help="Start the display's accessibility buses first and the apps on them, so "
            "their elements can be read and acted on (docs/elements.md).",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Start a desktop that keeps running after this command: a display and its apps.

    Prints `export DISPLAY=:N`, so `eval "$(viewfinder desktop start -- python form.py)"`
    points the shell at it. `viewfinder desktop stop :N` stops the display and every app.
    """
    try:
        width, height = parse_size(size)
        apps: list[list[str] | str] = [*(app or [])]
        if command:
            apps.append(list(command))
        record = state.start_desktop(
            width,
            height,
            apps,
            wait_for_windows=wait,
            window_timeout=timeout,
            accessibility=elements,
        )
    except DesktopConfigError as exc:
        raise _fail(str(exc), EXIT_BAD_INPUT) from exc
    except (ViewfinderError, OSError, AccessibilityBusError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps(record.to_dict()))
    else:
        typer.echo(f"export DISPLAY={record.name}")


def stop(
    display: Annotated[str | None, typer.Argument(help="The desktop to stop, as :N.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Stop every recorded desktop.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Stop a desktop (or --all): every app started with it, then its display."""
    if all_ == (display is not None):
        raise _fail("name one desktop (viewfinder desktop stop :N) or pass --all")
    try:
        if all_:
            stopped = state.stop_all_desktops()
        else:
            assert display is not None
            stopped = [state.stop_desktop(display)]
    except ViewfinderError as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps([record.name for record in stopped]))
    elif stopped:
        for record in stopped:
            typer.echo(f"stopped {record.name} and its {_apps(len(record.apps))}")
    else:
        typer.echo("no desktops to stop")


def _apps(count: int) -> str:
    return f"{count} app" if count == 1 else f"{count} apps"


def list_(as_json: JsonOption = False) -> None:
    """List the desktops started with `viewfinder desktop start`."""
    records = state.list_desktops()
    if as_json:
        typer.echo(json.dumps([record.to_dict() for record in records]))
        return
    if not records:
        typer.echo("no desktops; start one with `viewfinder desktop start`")
        return
    rows = [("DISPLAY", "SIZE", "ALIVE", "APPS", "STARTED")]
    for record in records:
        running = len(record.running_apps())
        rows.append(
            (
                record.name,
                record.size,
                "yes" if record.display_alive() else "no",
                f"{running}/{len(record.apps)} running",
                record.started_at,
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        typer.echo(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    for record in records:
        for app in record.apps:
            typer.echo(f"{record.name}  pid {app.pid}: {shlex.join(app.command)}")


def _parse_target(text: str | None) -> Any:
    if text is None or text.strip().lower() == "none":
        return None
    try:
        return parse_size(text)
    except DesktopConfigError:
        return text  # a name: XGA, WXGA, FWXGA, auto (ComputerTool says when it is not)


def act(
    action: Annotated[
        str,
        typer.Argument(
            help='One computer-use action as JSON, Anthropic\'s ({"action": "left_click", '
            '"coordinate": [100, 200]}) or OpenAI\'s ({"type": "click", "x": 100, "y": 200}).'
        ),
    ],
    display: DisplayOption = None,
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            "-o",
            help="Write the screenshot after the action here, in the format its extension "
            "names (.png, .jpg, .webp; PNG without one); '-' writes it to stdout.",
        ),
    ] = None,
    text_file: Annotated[
        str | None,
        typer.Option(
            "--text-file",
            help="Take the action's text (what `type` types) from this file, or '-' for "
            "stdin, exactly as it is (a final newline is typed as Return); the JSON then "
            "leaves `text` out.",
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="Scale the screenshot (and read coordinates) for this size: XGA, WXGA, FWXGA, "
            "auto or WIDTHxHEIGHT (default: the screen's own size).",
        ),
    ] = None,
    element: Annotated[
        str | None,
        typer.Option(
            "--element",
            help="Act on this element (a ref such as e12, as `viewfinder elements --display "
            ":N` or --elements list them) at its centre, instead of a coordinate.",
        ),
    ] = None,
    with_elements: Annotated[
        bool,
        typer.Option(
            "--elements",
            help="Print the elements on the screen after the action (refs, roles, names, "
            "boxes in the screenshot's coordinates).",
        ),
    ] = False,
    set_of_mark: Annotated[
        bool,
        typer.Option(
            "--set-of-mark",
            help="Write the screenshot with a numbered box around each element (box 12 is "
            "e12) to -o, and print the elements.",
        ),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Perform one computer-use action on a display and write the screen after it.

    Prints what it did (to stderr when the screenshot goes to stdout). Bad JSON or a
    malformed action is a one-line error with exit status 2, and so is an element that
    is not on the screen. Each run reads the elements afresh: refs are those of a fresh
    read, as `viewfinder elements --display :N` prints them.
    """
    parsed = _read_action(action, text_file)
    if element is not None:
        parsed["element"] = element
    if with_elements or set_of_mark:
        parsed["elements"] = True
    if set_of_mark:
        parsed["set_of_mark"] = True
    name = display or os.environ.get("DISPLAY")
    if not name:
        raise _fail("no display: pass --display :N (or set DISPLAY)", EXIT_BAD_INPUT)
    scaled_for = _parse_target(target)
    output = _check_output(out)
    from viewfinder.desktop.computer import ComputerTool

    try:
        tool = ComputerTool(name, target=scaled_for)
    except ViewfinderError as exc:  # a bad --target is bad input; a display gone is not
        raise _fail(str(exc), EXIT_BAD_INPUT if isinstance(exc, ValueError) else 1) from exc
    try:
        result = tool(parsed)
    finally:
        tool.close()
    if result.is_error:
        raise _fail(result.text or "the action failed", EXIT_BAD_INPUT)
    shot = result.marked if set_of_mark and result.marked is not None else result.screenshot
    if output is not None and shot is None:
        raise _fail(
            f"{result.action} returns no screenshot, so there is nothing to write to {out}; "
            "leave out -o (or take a screenshot action)",
            EXIT_BAD_INPUT,
        )
    written = None
    if output is not None and shot is not None:
        written = _write_image(shot, output)
    say = typer.echo if output != "-" else lambda line: typer.echo(line, err=True)
    if as_json:
        say(
            json.dumps(
                {
                    "text": result.text,
                    "screenshot": None
                    if shot is None
                    else {"width": shot.width, "height": shot.height, "path": str(written or "")},
                    "elements": result.elements_text,
                }
            )
        )
        return
    if result.text:
        say(result.text)
    elif shot is not None:  # a screenshot: nothing was done, say what was seen
        say(f"{result.action}: {shot.width}x{shot.height}")
    if written is not None and shot is not None:
        say(f"wrote {written} ({shot.width}x{shot.height})")
    if result.elements_text:
        say(result.elements_text)


def _read_action(action: str, text_file: str | None) -> dict[str, Any]:
    """The action's JSON object, with its text from ``text_file`` when one is named."""
    try:
        parsed = json.loads(action)
    except ValueError as exc:
        raise _fail(f"the action is not JSON ({exc}): {action!r:.200}", EXIT_BAD_INPUT) from None
    except RecursionError:
        raise _fail(
            "the action is nested too deeply to be a computer-use action; pass one JSON "
            'object such as {"action": "screenshot"}',
            EXIT_BAD_INPUT,
        ) from None
    if not isinstance(parsed, dict):
        raise _fail(
            f"the action must be a JSON object such as "
            f'{{"action": "screenshot"}}, not {type(parsed).__name__}',
            EXIT_BAD_INPUT,
        )
    if text_file is None:
        return parsed
    if "text" in parsed:
        raise _fail(
            "the action has a text and --text-file names another; give the text in one place",
            EXIT_BAD_INPUT,
        )
    try:
        text = _read_text(text_file)
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(f"--text-file {text_file}: cannot read it ({exc})", EXIT_BAD_INPUT) from None
    return {**parsed, "text": text}


def _read_text(name: str) -> str:
    return sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")


def _check_output(out: str | None) -> str | Path | None:
    """``-o`` as given, checked before the action runs: '-', a folder or an image path
    whose folder exists."""
    if out is None or out == "-":
        return out
    path = Path(out)
    if path.is_dir():
        return path
    if path.suffix and path.suffix.lower() not in IMAGE_SUFFIXES:
        raise _fail(
            f"-o {out}: {path.suffix!r} is not an image extension; use "
            f"{', '.join(IMAGE_SUFFIXES)} or '-' for stdout",
            EXIT_BAD_INPUT,
        )
    if not path.parent.is_dir():
        raise _fail(
            f"-o {out}: the folder {path.parent} does not exist; create it first or write "
            "somewhere else",
            EXIT_BAD_INPUT,
        )
    return path


def _write_image(shot: Any, output: str | Path) -> Path | None:
    """Write ``shot`` to stdout ('-') or to ``output`` in the format its extension names."""
    if output == "-":
        sys.stdout.buffer.write(shot.data)
        sys.stdout.buffer.flush()
        return None
    assert isinstance(output, Path)
    wanted = IMAGE_SUFFIXES.get(output.suffix.lower()) if output.suffix else None
    if wanted is not None and wanted != shot.format:
        shot = type(shot).from_image(
            shot.to_pil(), source=shot.source, format=wanted, captured_at=shot.captured_at
        )
    try:
        return Path(shot.save(output))
    except (ViewfinderError, OSError) as exc:
        raise _fail(str(exc)) from exc


def _reap_abandoned() -> None:
    """Before any desktop command: stop the displays of desktops whose holder was killed."""
    from viewfinder.xvfb.server import reap_abandoned

    reap_abandoned()


def desktop_app() -> typer.Typer:
    """The ``desktop`` sub-command group."""
    app = typer.Typer(
        name="desktop",
        help="Start and stop desktops (a display with apps) and perform computer-use actions "
        "on them.",
        no_args_is_help=True,
        callback=_reap_abandoned,
    )
    app.command(
        "start",
        context_settings={"allow_interspersed_args": False},
    )(start)
    app.command("stop")(stop)
    app.command("list")(list_)
    app.command("act")(act)
    return app
