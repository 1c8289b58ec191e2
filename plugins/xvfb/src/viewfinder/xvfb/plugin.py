"""Registers the ``xvfb`` capture backend, the ``atspi`` element source and the
``viewfinder display`` commands."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl
from viewfinder.core.hookspecs import RegisterBackend, RegisterElementSource


@hookimpl
def viewfinder_register_capture_backends(register: RegisterBackend) -> None:
    # by import path: the backend module loads only when a capture uses it
    register("xvfb", "viewfinder.xvfb.backend:XvfbBackend")


@hookimpl
def viewfinder_register_element_sources(register: RegisterElementSource) -> None:
    # by import path: jeepney loads only when the elements of a display are read
    register("atspi", "viewfinder.xvfb.atspi_source:AtspiSource")


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder display` runs, so other commands do not pay for it
    app.add_lazy_typer(
        "display",
        "viewfinder.xvfb.commands:display_app",
        help="Start, list and stop long-lived Xvfb displays.",
    )
