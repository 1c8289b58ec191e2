"""Adds the ``viewfinder tui`` command."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # typer is imported only here (through cli), so the package loads without it.
    from viewfinder.tui.cli import register

    register(app)
