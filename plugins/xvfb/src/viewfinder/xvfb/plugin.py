"""Registers the ``xvfb`` capture backend and the ``viewfinder display`` commands."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl
from viewfinder.core.hookspecs import RegisterBackend


@hookimpl
def viewfinder_register_capture_backends(register: RegisterBackend) -> None:
    from viewfinder.xvfb.backend import XvfbBackend

    register(XvfbBackend.name, XvfbBackend)


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # typer is imported only here (through commands), so the plugin loads without it.
    from viewfinder.xvfb.commands import display_app

    app.add_typer(display_app(), name="display")
