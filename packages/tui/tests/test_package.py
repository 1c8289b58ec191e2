"""The package surface: the process manager loads without the UI; the rest on demand."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import viewfinder.tui


def test_the_process_manager_loads_without_textual_cdp_or_xlib() -> None:
    code = (
        "import json, sys; from viewfinder.tui import ProcessManager; "
        "print(json.dumps([m for m in ('textual', 'websockets', 'Xlib', 'typer') "
        "if m in sys.modules]))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_lazy_names() -> None:
    from viewfinder.tui.app import create_app
    from viewfinder.tui.environment import ViewfinderEnvironment

    assert viewfinder.tui.create_app is create_app
    assert viewfinder.tui.ViewfinderEnvironment is ViewfinderEnvironment
    with pytest.raises(AttributeError, match="nothing"):
        viewfinder.tui.nothing  # noqa: B018
