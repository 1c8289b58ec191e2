"""``viewfinder mcp``: the command. Only the ``viewfinder_register_commands`` hook
imports this module, so typer and the MCP SDK stay out of every other command."""

from __future__ import annotations

import json
import logging
import os
import shlex
import shutil
import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from viewfinder.core import PluginError, ViewfinderError
from viewfinder.core.result_budget import DEFAULT_CLIENT
from viewfinder.mcp.options import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SIZE,
    DEFAULT_SIZE,
    TOKEN_ENV,
    DesktopOptions,
    HttpOptions,
    McpOptionError,
    parse_apps,
    parse_browser,
    parse_client,
    parse_display,
    parse_max_size,
    parse_size,
    parse_workdir,
)

#: Exit status for options that cannot be used (click's, for misused options).
EXIT_BAD_OPTION = 2


def mcp_command(
    command: Annotated[
        list[str] | None,
        typer.Argument(
            help="An app to start on each session's desktop, with its arguments (after --).",
            show_default=False,
        ),
    ] = None,
    http: Annotated[
        bool,
        typer.Option("--http", help="Serve streamable HTTP instead of stdio."),
    ] = False,
    host: Annotated[
        str,
        typer.Option("--host", help="HTTP: address to listen on; beyond loopback needs a token."),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="HTTP: port to listen on (0: any free one).")
    ] = 8000,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            help=f"HTTP: a token every request must carry (Authorization: Bearer ...). "
            f"Every local user can read a command line: prefer ${TOKEN_ENV} or --token-file.",
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="HTTP: read the token from this file (its first line).",
            dir_okay=False,
        ),
    ] = None,
    idle_timeout: Annotated[
        float,
        typer.Option(
            "--idle-timeout",
            help="HTTP: seconds a session may go without a request before it and its desktop "
            "are closed.",
        ),
    ] = DEFAULT_IDLE_TIMEOUT,
    max_sessions: Annotated[
        int,
        typer.Option(
            "--max-sessions",
            help="HTTP: sessions (each with a desktop) open at once; one more is refused (503).",
        ),
    ] = DEFAULT_MAX_SESSIONS,
    display: Annotated[
        str | None,
        typer.Option(
            "--display",
            help="Use this running X display (:N) as every session's screen, and leave it "
            "running (default: each session starts a display of its own).",
        ),
    ] = None,
    size: Annotated[
        str,
        typer.Option(
            "--size", help="Screen size of the displays the sessions start, WIDTHxHEIGHT."
        ),
    ] = "{}x{}".format(*DEFAULT_SIZE),
    app: Annotated[
        list[str] | None,
        typer.Option(
            "--app",
            help="An app to start on each session's desktop, as one quoted command line "
            "(repeatable): --app 'python form.py'.",
        ),
    ] = None,
    browser: Annotated[
        str,
        typer.Option(
            "--browser",
            help="The browser of browser_execute: auto (a Chromium of the session's own, in its "
            "sandbox, started on first use), off (no browser tool), or a running browser's "
            "DevTools URL (ws://... or http://host:port).",
        ),
    ] = "auto",
    max_size: Annotated[
        str,
        typer.Option(
            "--max-size",
            help="The largest screenshot the model gets, WIDTHxHEIGHT (a larger screen is "
            "shrunk keeping its shape, and the model's coordinates mapped back); none for "
            "full size.",
        ),
    ] = "{}x{}".format(*DEFAULT_MAX_SIZE),
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--workdir",
            help="The folder the tools' files (recordings, cache files) stay inside (default: "
            "the current directory).",
            file_okay=False,
        ),
    ] = None,
    client: Annotated[
        str | None,
        typer.Option(
            "--client",
            help="The client whose limits every result is fitted to (image bytes and size, "
            "text tokens): claude-desktop (the default), claude-code, cursor or generic. "
            "--print-config writes the one of the client it is for.",
        ),
    ] = None,
    elements: Annotated[
        bool,
        typer.Option(
            "--elements",
            help="Start each session's display with accessibility buses, so its apps publish "
            "their elements, and have every computer result list them (refs an action can "
            "name: element='e12').",
        ),
    ] = False,
    print_config: Annotated[
        str | None,
        typer.Option(
            "--print-config",
            help="Print the JSON that starts this server from an MCP client (claude, cursor or "
            "vscode) and exit.",
        ),
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", help="What to log on stderr: debug, info, warning.")
    ] = "warning",
) -> None:
    """Serve every viewfinder tool to MCP clients (stdio, or streamable HTTP with --http).

    Each MCP session gets a desktop of its own on its first tool call (a display with
    the apps given after -- or by --app), a sandbox for the code it runs and a browser;
    they end with the session: when the client disconnects, stdin closes or the server
    gets SIGTERM. --print-config claude|cursor|vscode prints the JSON to paste into a
    client.
    """
    try:
        desktop = DesktopOptions(
            display=parse_display(display) if display is not None else None,
            size=parse_size(size, "--size"),
            apps=tuple(tuple(words) for words in parse_apps(app or [], command or [])),
            browser=parse_browser(browser),
            max_size=parse_max_size(max_size),
            workdir=parse_workdir(workdir),
            client=parse_client(client or profile_of(print_config)),
            elements=elements,
        )
        _check_programs(desktop.apps)
        if display is not None and size != "{}x{}".format(*DEFAULT_SIZE):
            raise McpOptionError(
                "--size", "applies to the displays the sessions start, not to --display"
            )
        http_options = None
        http_only = {
            "--host": host != "127.0.0.1",
            "--port": port != 8000,
            "--token": token is not None,
            "--token-file": token_file is not None,
            "--idle-timeout": idle_timeout != DEFAULT_IDLE_TIMEOUT,
            "--max-sessions": max_sessions != DEFAULT_MAX_SESSIONS,
        }
        given = [name for name, set_ in http_only.items() if set_]
        if given and not http:
            raise McpOptionError(given[0], f"{', '.join(given)} apply to --http only")
        if http:
            from viewfinder.mcp.auth import read_token

            http_options = HttpOptions(
                host=host,
                port=port,
                token=read_token(token, token_file),
                idle_timeout=idle_timeout,
                max_sessions=max_sessions,
            )
    except McpOptionError as exc:
        raise _fail(str(exc), EXIT_BAD_OPTION) from None
    if print_config is not None:
        _print_config(print_config, desktop, http_options)
        return
    try:
        from viewfinder.mcp.sessions import private_workdir

        if http or os.geteuid() == 0:  # where sandboxes of other user ids run
            private_workdir(desktop.workdir)
    except McpOptionError as exc:
        raise _fail(str(exc), EXIT_BAD_OPTION) from None
    if token is not None:
        typer.secho(
            f"warning: a token given with --token is on the command line, where every local "
            f"user can read it; use ${TOKEN_ENV} or --token-file",
            err=True,
            fg=typer.colors.YELLOW,
        )
    logging.basicConfig(
        level=getattr(logging, log_level.upper(), logging.WARNING),
        stream=sys.stderr,
        format="viewfinder mcp: %(levelname)s %(name)s: %(message)s",
        force=True,  # the viewfinder command set up a warnings-only handler before
    )
    code = _serve(desktop, http_options)
    # the sessions are closed and the status is set: a stop signal from here to the
    # exit (threads joined, modules torn down) would only turn 143 into -15
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    if code:
        raise typer.Exit(code)


def _check_programs(apps: tuple[tuple[str, ...], ...]) -> None:
    """A program of --app that is not installed fails the start, not every session."""
    from viewfinder.desktop.apps import AppNotFoundError, find_program

    for words in apps:
        try:
            find_program(words)
        except AppNotFoundError as exc:
            raise McpOptionError("--app", str(exc)) from None


def _serve(desktop: DesktopOptions, http: HttpOptions | None) -> int:
    from viewfinder.core import tool_registry
    from viewfinder.mcp.server import served_tools

    _reap_leftovers()
    try:
        registry = tool_registry()
    except PluginError as exc:
        raise _fail(str(exc)) from None
    tools = served_tools(registry, desktop)
    withheld = {name: "started with --browser off" for name in registry if name not in tools}
    try:
        if http is None:
            from viewfinder.mcp.stdio import serve_stdio

            return serve_stdio(tools, desktop, withheld)
        from viewfinder.mcp.http import serve_http

        return serve_http(tools, desktop, http, withheld)
    except OSError as exc:  # the port is taken, say
        raise _fail(f"cannot serve: {exc}") from None


def _reap_leftovers() -> None:
    """Stop what a server that died by SIGKILL left: its displays, its sandboxes' users
    and their session spaces."""
    from viewfinder.xvfb.server import reap_abandoned

    try:
        reap_abandoned()
        if os.geteuid() == 0:
            from viewfinder.codeenv.sandbox_users import shared_users
            from viewfinder.codeenv.session_space import sweep_abandoned

            shared_users().reap_abandoned()
            sweep_abandoned()  # the session spaces it left mounted
    except (OSError, ViewfinderError) as exc:
        logging.getLogger(__name__).warning("removing what an earlier server left failed: %s", exc)


def _print_config(client: str, desktop: DesktopOptions, http: HttpOptions | None) -> None:
    from viewfinder.mcp.config import CLIENTS, client_config, where_it_goes

    if client not in CLIENTS:
        raise _fail(
            f"--print-config: {client!r} is not a client this knows; use {', '.join(CLIENTS)}",
            EXIT_BAD_OPTION,
        )
    arguments = server_arguments(desktop)
    try:
        config = client_config(client, arguments, http)
    except McpOptionError as exc:
        raise _fail(str(exc), EXIT_BAD_OPTION) from None
    typer.echo(json.dumps(config, indent=2))
    typer.echo(where_it_goes(client, http is not None), err=True)


def server_arguments(desktop: DesktopOptions) -> list[str]:
    """The ``viewfinder mcp`` options that give ``desktop`` (the defaults left out, but
    for ``--workdir``: a client starts the server in a folder of its choosing, ``/``
    for Claude Desktop, so the folder is pinned by absolute path)."""
    defaults = DesktopOptions()
    arguments: list[str] = []
    if desktop.display is not None:
        arguments += ["--display", desktop.display]
    if desktop.size != defaults.size:
        arguments += ["--size", "{}x{}".format(*desktop.size)]
    for words in desktop.apps:
        # a client starts the server in a folder and with a PATH of its choosing: the
        # program and files named relative to here are given as absolute paths
        program = shutil.which(words[0]) or words[0]
        words = (program, *(_absolute_if_file(word) for word in words[1:]))
        arguments += ["--app", shlex.join(words)]
    arguments += ["--client", desktop.client]
    if desktop.browser != defaults.browser:
        arguments += ["--browser", desktop.browser]
    if desktop.max_size != defaults.max_size:
        size = desktop.max_size
        arguments += ["--max-size", "{}x{}".format(*size) if size is not None else "none"]
    if desktop.elements:
        arguments.append("--elements")
    arguments += ["--workdir", str(desktop.workdir)]
    return arguments


def profile_of(client: str | None) -> str:
    """The result budget of a ``--print-config`` client: its own, or for ``claude``
    (Claude Code and Claude Desktop read the same file) Claude Code's, the tighter."""
    from viewfinder.mcp.config import CLIENT_PROFILES

    return CLIENT_PROFILES.get(client or "", DEFAULT_CLIENT)


def _absolute_if_file(word: str) -> str:
    path = Path(word)
    if word.startswith("-") or path.is_absolute() or not path.exists():
        return word
    return str(path.resolve())


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {' '.join(message.split())}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=code)


__all__: list[Any] = ["mcp_command", "server_arguments"]
