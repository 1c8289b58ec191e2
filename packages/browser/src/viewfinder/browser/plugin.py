"""The browser package's plugin: adds ``viewfinder browser`` to the command."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder browser` runs, so other commands do not pay for it
    app.add_lazy_typer(
        "browser",
        "viewfinder.browser.cli:browser_app",
        help="Drive a browser page with Python snippets; screenshots come back as images.",
    )


@hookimpl
def viewfinder_register_tools(register: Any) -> None:
    from viewfinder.browser.agent_tool import BROWSER_EXECUTE
    from viewfinder.browser.toolset.registered import toolset_tools

    register(BROWSER_EXECUTE)
    for tool in toolset_tools():  # browser_navigate, browser_read_page, ...
        register(tool)
