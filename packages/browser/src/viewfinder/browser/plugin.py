"""The browser package's plugin: adds ``viewfinder browser`` to the command."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # typer is imported only here (through cli), so the package loads without it.
    from viewfinder.browser.cli import browser_app

    app.add_typer(browser_app(), name="browser")
