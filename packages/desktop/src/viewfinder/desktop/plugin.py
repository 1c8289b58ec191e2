"""The desktop package's plugin module: adds ``viewfinder desktop`` and its tools.

Kept light: ``viewfinder --help`` and the tool registry import this module, so what
the command and the tools need is imported when they run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder desktop` runs, so other commands do not pay for it
    app.add_lazy_typer(
        "desktop",
        "viewfinder.desktop.commands:desktop_app",
        help="Start and stop desktops (a display with apps) and perform computer-use "
        "actions on them.",
    )


@hookimpl
def viewfinder_register_tools(register: Callable[[Any], None]) -> None:
    from viewfinder.desktop.tools import desktop_tools

    for tool in desktop_tools():
        register(tool)
