"""``viewfinder view PATH``: serve the viewer's page for PATH and open it in a browser."""

from __future__ import annotations

import os
import secrets
import threading
import time
import webbrowser
from pathlib import Path
from typing import Annotated
from urllib.parse import quote

import typer

from viewfinder.core.web_access import is_loopback
from viewfinder.viewer.errors import ViewerSettingsError
from viewfinder.viewer.settings import TOKEN_ENV, ViewerSettings

DEFAULT_PORT = 8765


def view_command(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="A recorder session or desktop run folder, a cache file, a Trajectory "
            "JSON, an `exec --out` or browser --shots folder, or a folder holding some.",
        ),
    ] = None,
    live: Annotated[
        list[str] | None,
        typer.Option("--live", help="Also watch this X display live, e.g. :1 (repeatable)."),
    ] = None,
    control: Annotated[
        bool,
        typer.Option("--control", help="Let clicks and keys in the live view reach the display."),
    ] = False,
    screen: Annotated[
        str | None,
        typer.Option(
            "--screen",
            help="Check cache files against this screen: an X display (:1, captured when "
            "the page loads) or a screenshot file.",
        ),
    ] = None,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; beyond loopback needs a token.")
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port", min=0, max=65535, help="Port (0: any free one; 8765 falls back to one)."
        ),
    ] = DEFAULT_PORT,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            dir_okay=False,
            help=f"Read the token from this file (default ${TOKEN_ENV}; beyond loopback "
            "without one, a random token is made and printed in the address).",
        ),
    ] = None,
    no_open: Annotated[
        bool, typer.Option("--no-open", help="Do not open the page in a browser.")
    ] = False,
    live_format: Annotated[
        str, typer.Option("--live-format", help="Live frames as jpeg or webp.")
    ] = "jpeg",
    live_fps: Annotated[
        float, typer.Option("--live-fps", min=1, max=60, help="Live frames a second, at most.")
    ] = 30.0,
) -> None:
    """Show recordings, desktop runs, cache files, trajectories and runs in a web page;
    watch a display live.

    Serves a local page (nothing from the network: everything ships in the wheel) and
    opens it. Only files under PATH are served. Ctrl-C stops.
    """
    from viewfinder.viewer.local import bind, uvicorn_server

    if path is not None and not path.exists():
        raise typer.BadParameter(f"{path} does not exist", param_hint="PATH")
    if live_format not in ("jpeg", "webp"):
        raise typer.BadParameter("use jpeg or webp", param_hint="--live-format")
    token = _token(token_file)
    made_token = False
    if token is None and not is_loopback(host):
        token, made_token = secrets.token_urlsafe(18), True
    try:
        settings = ViewerSettings(
            root=path.resolve() if path is not None else None,
            live=tuple(live or ()),
            control=control,
            screen=screen,
            host=host,
            port=port,
            token=token,
            live_format="webp" if live_format == "webp" else "jpeg",
            live_fps=live_fps,
        )
    except (ViewerSettingsError, ValueError) as exc:
        typer.secho(f"error: {exc}", err=True, fg="red")  # one line, before anything serves
        raise typer.Exit(2) from None
    try:
        sock = bind(host, port, fallback=port == DEFAULT_PORT)
    except OSError as exc:
        typer.secho(f"error: cannot listen on {host}:{port}: {exc}", err=True, fg="red")
        raise typer.Exit(1) from None
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    url = f"http://{shown}:{bound_port}/"
    if path is None and live:
        url += f"?live={quote(live[0])}"
    if token:
        # in the fragment: the page reads it, no browser sends it to any server
        url += f"#token={quote(token)}"
    what = str(path) if path is not None else f"display {', '.join(live or [])} live"
    typer.echo(f"viewing {what} on {url}  (Ctrl-C to stop)")
    if made_token:
        typer.echo("a token was made for this address; keep it to yourself")
    server = uvicorn_server(settings, log_level="warning")
    if not no_open:
        threading.Thread(target=_open_when_ready, args=(server, url), daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def _open_when_ready(server: object, url: str) -> None:
    deadline = time.monotonic() + 30
    while not getattr(server, "started", False) and time.monotonic() < deadline:
        time.sleep(0.05)
    webbrowser.open(url)


def _token(token_file: Path | None) -> str | None:
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise typer.BadParameter(
                f"cannot read the token from {token_file}: {exc}", param_hint="--token-file"
            ) from None
        if not lines or not lines[0].strip():
            raise typer.BadParameter(f"{token_file} is empty", param_hint="--token-file")
        return lines[0].strip()
    return os.environ.get(TOKEN_ENV) or None
