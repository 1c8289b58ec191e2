"""``viewfinder browser exec|launch``: snippets against a page from the command line.

Exit status of ``exec``: 0 when the snippet ran to its end, 1 on bad input or when no
browser can be reached (one line on stderr), 2 when the snippet failed (syntax error,
exception, timeout, browser gone; the report is in the output), 3 when it ran but a
screenshot could not be saved where ``--shots`` asked.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from viewfinder.browser.session import DEFAULT_TIMEOUT, BrowserSession
from viewfinder.cdp import CDP_URL_ENV, launch_chromium, resolve_cdp_url
from viewfinder.core.files import output_folder

EXIT_SNIPPET_FAILED = 2
EXIT_NOT_SAVED = 3

CdpUrl = Annotated[
    str | None,
    typer.Option(
        "--cdp-url",
        help=f"Attach to this browser (ws://... or http://host:port) instead of launching "
        f"one; default ${CDP_URL_ENV}.",
    ),
]
Width = Annotated[int, typer.Option("--width", min=1, help="Viewport width in CSS pixels.")]
Height = Annotated[int, typer.Option("--height", min=1, help="Viewport height in CSS pixels.")]


def _read_snippet(snippet: str) -> str:
    if snippet == "-":
        return sys.stdin.read()
    candidate = Path(snippet)
    # A one-line argument naming an existing file is that file; anything else is code.
    if "\n" not in snippet and len(snippet) < 4096:
        try:
            if candidate.is_file():
                return candidate.read_text(encoding="utf-8")
        except OSError:
            pass
    return snippet


def exec_command(
    snippet: Annotated[
        str,
        typer.Argument(
            help="Python to run (await at top level), a file holding it, or - for stdin."
        ),
    ],
    url: Annotated[
        str | None, typer.Option("--url", help="Page to open before the snippet runs.")
    ] = None,
    shots: Annotated[
        Path | None,
        typer.Option(
            "--shots",
            help="Save every screenshot here as <session>-<time>-<n>.<ext> "
            "(default $VIEWFINDER_SCREENSHOT_DIR, else not saved).",
        ),
    ] = None,
    cdp_url: CdpUrl = None,
    timeout: Annotated[
        float, typer.Option("--timeout", "-t", help="Seconds the snippet may run (1 to 600).")
    ] = DEFAULT_TIMEOUT,
    width: Width = 1280,
    height: Height = 800,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result as JSON (images left out).")
    ] = False,
    new_page: Annotated[
        bool,
        typer.Option(
            "--new-page",
            help="With an attached browser, work in a new window (closed afterwards) "
            "instead of the page the previous exec left.",
        ),
    ] = False,
) -> None:
    """Run a snippet against a page; print its output and save its screenshots.

    Attached to a browser (--cdp-url or $VIEWFINDER_CDP_URL), it works on the page the
    previous exec on that browser left, DOM and all, and leaves it open for the next;
    a snippet can move to a popup with `await page.switch_to()`.
    """
    code = _read_snippet(snippet)
    if shots is not None:
        output_folder(shots)  # a folder that cannot be made is an error before anything runs
    attached = resolve_cdp_url(cdp_url) is not None
    with BrowserSession(
        "cli",
        cdp_url=cdp_url,
        url=url,
        width=width,
        height=height,
        screenshot_dir=shots,
        keep_page=attached and not new_page,
    ) as session:
        result = session.execute(code, timeout)
    if as_json:
        typer.echo(json.dumps(result.summary(), indent=2))
    else:
        typer.echo(result.output)
        for path in result.files:
            typer.echo(f"saved {path}", err=True)
    if not result.ok:
        raise typer.Exit(EXIT_SNIPPET_FAILED)
    if shots is not None and result.warnings:
        for warning in result.warnings:
            typer.secho(f"error: {warning}", err=True, fg=typer.colors.RED)
        raise typer.Exit(EXIT_NOT_SAVED)


def launch_command(
    width: Width = 1280,
    height: Height = 800,
    duration: Annotated[
        float | None,
        typer.Option("--duration", min=0, help="Stop after this many seconds (default: Ctrl-C)."),
    ] = None,
) -> None:
    """Start a headless Chromium and print its CDP URL; it runs until Ctrl-C."""
    with launch_chromium(width=width, height=height) as browser:
        typer.echo(browser.http_url)
        typer.echo(
            f"Chromium {browser.pid} is listening at {browser.http_url} ({browser.ws_url}).\n"
            f"Attach with: export {CDP_URL_ENV}={browser.http_url}\n"
            "Press Ctrl-C to stop it.",
            err=True,
        )
        deadline = None if duration is None else time.monotonic() + duration
        try:
            while browser.running and (deadline is None or time.monotonic() < deadline):
                time.sleep(0.2)
        except KeyboardInterrupt:
            typer.echo("stopping Chromium", err=True)
            return
        if not browser.running:
            typer.secho(
                f"Chromium exited with code {browser.process.returncode}",
                err=True,
                fg=typer.colors.RED,
            )
            raise typer.Exit(1)


def browser_app() -> typer.Typer:
    """The ``viewfinder browser`` sub-command."""
    app = typer.Typer(
        help="Drive a browser page with Python snippets; screenshots come back as images.",
        no_args_is_help=True,
    )
    app.command("exec")(exec_command)
    app.command("launch")(launch_command)
    return app
