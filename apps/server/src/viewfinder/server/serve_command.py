"""``viewfinder serve``: code env or desktop sessions over the OpenEnv wire protocol."""

from __future__ import annotations

import os
import re
import shlex
import signal
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from viewfinder.core.errors import ViewfinderError
from viewfinder.core.providers import open_provider
from viewfinder.server.desktop_task import DesktopTask
from viewfinder.server.settings import HEAD_LOST_ACTIONS, TOKEN_ENV, ServerSettings


def _envs() -> dict[str, Any]:
    """The registered environments (``viewfinder_register_envs``), by name."""
    from viewfinder.core.envs import registered_envs

    return registered_envs()


def _env_help() -> str:
    listed = "; ".join(
        f"{name}: {entry.description}" if entry.description else name
        for name, entry in sorted(_envs().items())
    )
    return f"What each session is, one of the registered environments ({listed})."


def serve(
    env: Annotated[
        str,
        typer.Option(
            "--env",
            # the module is imported when `serve` runs: the plugins' envs are listed then
            help=_env_help(),
        ),
    ] = "code",
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; beyond loopback needs a token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    max_sessions: Annotated[
        int,
        typer.Option("--max-sessions", min=1, help="Sessions at once; more get CAPACITY_REACHED."),
    ] = 16,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            help=f"Token every request must carry (Authorization: Bearer ...). Every local "
            f"user can read a command line: prefer ${TOKEN_ENV} or --token-file.",
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="Read the token from this file (its first line).",
            dir_okay=False,
        ),
    ] = None,
    idle_timeout: Annotated[
        float,
        typer.Option("--idle-timeout", min=0.1, help="Seconds before an idle session closes."),
    ] = 600.0,
    pool_size: Annotated[
        int, typer.Option("--pool-size", min=1, help="Warm displays kept ready.")
    ] = 2,
    size: Annotated[str, typer.Option("--size", help="Display size, WIDTHxHEIGHT.")] = "1280x800",
    max_step_timeout: Annotated[
        float,
        typer.Option(
            "--max-step-timeout",
            min=1,
            max=86400,
            help="Seconds a step may run at most, whatever a client asks (longer is cut, "
            "with a note).",
        ),
    ] = 300.0,
    session_network: Annotated[
        str,
        typer.Option(
            "--session-network",
            help="none: each session has only its own loopback; host: sessions reach the "
            "machine's network and its loopback services (the server's too).",
        ),
    ] = "none",
    require_isolation: Annotated[
        bool,
        typer.Option(
            "--require-isolation",
            help="Refuse to start where sessions cannot be isolated from each other.",
        ),
    ] = False,
    app: Annotated[
        list[str] | None,
        typer.Option(
            "--app",
            help="Desktop: a program (with its arguments, split as a shell would) that every "
            "reset starts unless it names its own apps; repeat for several. A reset may name "
            "only these.",
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="Desktop: the size the model sees the screen at: XGA, WXGA, FWXGA, auto or "
            "WIDTHxHEIGHT (default: the screen's own).",
        ),
    ] = None,
    allow_any_app: Annotated[
        bool,
        typer.Option(
            "--allow-any-app",
            help="Desktop: let a reset start any program, not only the --app ones. Apps run "
            "as the server's user: only for clients trusted with that.",
        ),
    ] = False,
    provider: Annotated[
        str,
        typer.Option(
            "--provider",
            help="Where sessions run: local (this machine) or ray (Ray actors on a cluster's "
            "nodes with free display slots; needs viewfinder-ray), or a plugin's provider.",
        ),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="Ray: the cluster to join: auto (the one this machine runs), HOST:PORT or "
            "ray://HOST:10001 (default: auto when RAY_ADDRESS is set, else a Ray started here).",
        ),
    ] = None,
    on_head_lost: Annotated[
        str,
        typer.Option(
            "--on-head-lost",
            help="When the cluster's head is gone: stay (serve on, /health 503, sessions "
            "refused) or exit (tell the sessions SESSION_LOST, then stop with status 0, "
            "for a supervisor to restart the server against the returned head).",
        ),
    ] = "stay",
) -> None:
    """Serve code env or desktop sessions (HTTP and WebSocket, the OpenEnv wire protocol)."""
    from viewfinder.codeenv import CodeEnvConfig
    from viewfinder.codeenv.exec_command import parse_size

    try:
        width, height = parse_size(size)
    except typer.BadParameter as exc:
        raise _bad("--size", exc.message) from None
    if not 0 <= port <= 65535:
        raise _bad("--port", f"{port} is not a port (0 to 65535)")
    envs = _envs()
    if env not in envs:
        raise _bad("--env", f"{env!r} is not a choice: use {' or '.join(sorted(envs))}")
    takes_apps = bool(getattr(envs[env].factory, "takes_apps", False))
    if session_network not in ("none", "host"):
        raise _bad("--session-network", f"{session_network!r} is not a choice: use none or host")
    if not takes_apps and (app or target is not None or allow_any_app):
        with_apps = [
            name for name, entry in envs.items() if getattr(entry.factory, "takes_apps", 0)
        ]
        raise _bad(
            "--app",
            f"--app, --target and --allow-any-app are for {' or '.join(with_apps)} sessions: "
            f"add --env {' or '.join(with_apps)}",
        )
    if on_head_lost not in HEAD_LOST_ACTIONS:
        raise _bad("--on-head-lost", f"{on_head_lost!r} is not a choice: use stay or exit")
    options = _provider_options(provider, ray_address)
    task = _desktop_task(app or [], target)
    token = _token(token, token_file)
    settings = ServerSettings(
        env=env,
        desktop=task,
        allow_any_app=allow_any_app,
        provider=provider,
        provider_options=options,
        on_head_lost="exit" if on_head_lost == "exit" else "stay",
        host=host,
        port=port,
        token=token or None,
        max_sessions=max_sessions,
        idle_timeout_s=idle_timeout,
        pool_size=pool_size,
        display_width=width,
        display_height=height,
        codeenv=CodeEnvConfig(
            width=width,
            height=height,
            timeout_s=min(30.0, max_step_timeout),
            max_timeout_s=max_step_timeout,
            session_network="host" if session_network == "host" else "none",
            require_isolation=require_isolation,
        ),
    )
    if require_isolation:
        from viewfinder.server.app import check_isolation
        from viewfinder.server.errors import IsolationUnavailableError

        try:
            check_isolation(settings)
        except IsolationUnavailableError as exc:
            typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
            raise typer.Exit(1) from None
    from viewfinder.server.app import create_app, uvicorn_server
    from viewfinder.server.served import served_env

    before = signal.getsignal(signal.SIGTERM)
    try:
        # opened here, not in the app's start-up: a provider that cannot start (no Ray
        # client, no cluster) is one line and status 2, not a server's traceback
        sessions = open_provider(
            settings.provider, served_env(settings).spec(), **settings.provider_settings()
        )
    except ViewfinderError as exc:
        raise _bad("--provider", f"the {provider!r} session provider cannot start: {exc}") from None
    finally:
        # Ray's driver sets a SIGTERM handler that exits with status 15; the server's own
        # handling (close the sessions, then end) is what a stop should do
        signal.signal(signal.SIGTERM, before)
    where = f"http://{host}:{port}"
    also = f", mcp: {where}/mcp" if takes_apps else ""
    runs = "" if provider == "local" else f", sessions on the {provider} provider"
    typer.echo(f"serving {env} sessions on {where} (ws: {where}/ws{also}{runs})", err=True)
    server = uvicorn_server(
        create_app(settings, provider=sessions), host=host, port=port, log_level="info"
    )
    server.run()
    if getattr(server, "stopped_because", None) is not None:
        typer.echo("the Ray cluster's head is gone; stopping (--on-head-lost exit)", err=True)


def _provider_options(provider: str, ray_address: str | None) -> dict[str, Any]:
    """The provider's options, once its name is known to be registered."""
    from viewfinder.core.providers import session_providers

    known = session_providers()
    if provider not in known:
        hint = " (install viewfinder-ray: pip install 'viewfinder-server[ray]')"
        raise _bad(
            "--provider",
            f"{provider!r} is not a session provider here: use "
            f"{' or '.join(sorted(known))}{hint if provider == 'ray' else ''}",
        )
    if ray_address is not None and provider != "ray":
        raise _bad("--ray-address", "--ray-address is for --provider ray")
    if provider != "ray":
        return {}
    address = ray_address or os.environ.get("RAY_ADDRESS") or None
    if address is not None and not address.strip():
        raise _bad("--ray-address", "give a cluster address, or leave it out")
    return {"address": address}


def _desktop_task(apps: list[str], target: str | None) -> DesktopTask:
    """The server's desktop task from --app and --target; a one-line error naming which
    option is wrong, or a program of --app that is not installed (it would fail every
    reset, so it fails the start)."""
    commands = []
    for command in apps:
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise _bad("--app", f"{command!r} cannot be split: {exc}") from None
        if not words:
            raise _bad("--app", "an app is empty; give a program")
        commands.append(words)
    _check_programs(commands)
    values: dict[str, Any] = {"apps": commands}
    if target is not None:
        sizes = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", target)
        values["target"] = [int(sizes[1]), int(sizes[2])] if sizes else target
    try:
        return DesktopTask.model_validate(values)
    except ValidationError as exc:
        message = "; ".join(str(error["msg"]) for error in exc.errors(include_url=False))
        hint = "--target" if any(e["loc"][:1] == ("target",) for e in exc.errors()) else "--app"
        raise _bad(hint, message) from None


def _check_programs(commands: list[list[str]]) -> None:
    from viewfinder.desktop.apps import AppNotFoundError, find_program

    for words in commands:
        try:
            find_program(words)
        except AppNotFoundError as exc:
            raise _bad("--app", str(exc)) from None


def _bad(option: str, message: str) -> typer.Exit:
    """Say in one line what is wrong with ``option``; the exit (status 2) to raise."""
    typer.secho(f"error: {option}: {' '.join(message.split())}", err=True, fg=typer.colors.RED)
    return typer.Exit(2)


def _token(given: str | None, token_file: Path | None) -> str | None:
    """The token from --token-file, --token (with a warning) or the environment."""
    if given is not None and token_file is not None:
        raise _bad("--token", "give --token or --token-file, not both")
    if token_file is not None:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise _bad("--token-file", f"cannot read the token from {token_file}: {exc}") from None
        if not lines or not lines[0].strip():
            raise _bad("--token-file", f"{token_file} is empty")
        return lines[0].strip()
    if given is not None:
        typer.secho(
            f"warning: a token given with --token is on the command line, where every local "
            f"user can read it; use ${TOKEN_ENV} or --token-file",
            err=True,
            fg=typer.colors.YELLOW,
        )
        return given
    return os.environ.get(TOKEN_ENV) or None


def register(app: Any) -> None:
    """Add ``serve`` to the root command."""
    app.command("serve")(serve)
