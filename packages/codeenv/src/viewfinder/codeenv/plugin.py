"""The code env's plugin module: adds ``viewfinder exec`` to the command line."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # typer is imported only here, so the code env works without the CLI installed.
    from viewfinder.codeenv.exec_command import register

    register(app)
