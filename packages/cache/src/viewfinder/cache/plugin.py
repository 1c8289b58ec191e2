"""The cache package's plugin: adds ``viewfinder cache`` to the command."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder cache` runs, so other commands do not pay for it
    app.add_lazy_typer(
        "cache",
        "viewfinder.cache.cli:cache_app",
        help="Trajectory cache files: build, show, check against the screen, replay, reset.",
    )


@hookimpl
def viewfinder_register_tools(register: Any) -> None:
    from viewfinder.cache.agent_tools import CACHE_CHECK, CACHE_REPLAY

    register(CACHE_CHECK)
    register(CACHE_REPLAY)
