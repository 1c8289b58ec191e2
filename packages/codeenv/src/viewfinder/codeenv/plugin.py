"""The code env's plugin module: adds ``viewfinder exec`` to the command line."""

from __future__ import annotations

from typing import Any

from viewfinder.core import hookimpl


@hookimpl
def viewfinder_register_commands(app: Any) -> None:
    # imported when `viewfinder exec` runs, so other commands do not pay for it
    app.add_lazy_command(
        "exec",
        "viewfinder.codeenv.exec_command:exec_file",
        help="Run FILE in a fresh code env on a virtual display; capture_screenshot() works "
        "inside.",
    )


@hookimpl
def viewfinder_register_tools(register: Any) -> None:
    from viewfinder.codeenv.tools import RUN_CODE

    register(RUN_CODE)
