"""``viewfinder serve``: the code env server over the OpenEnv wire protocol."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from viewfinder.server.settings import TOKEN_ENV, ServerSettings


def serve(
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
            envvar=TOKEN_ENV,
            help=f"Token every request must carry (Authorization: Bearer ...); or ${TOKEN_ENV}.",
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
) -> None:
    """Serve code env sessions (HTTP and WebSocket, the OpenEnv wire protocol)."""
    from viewfinder.codeenv import CodeEnvConfig
    from viewfinder.codeenv.exec_command import parse_size
    from viewfinder.server.app import create_app, uvicorn_server

    width, height = parse_size(size)
    settings = ServerSettings(
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
        ),
    )
    where = f"http://{host}:{port}"
    typer.echo(f"serving code env sessions on {where} (ws: {where}/ws)", err=True)
    uvicorn_server(create_app(settings), host=host, port=port, log_level="info").run()


def register(app: Any) -> None:
    """Add ``serve`` to the root command."""
    app.command("serve")(serve)
