"""Importing core stays light: no UI, server or CLI framework, no plugin loaded."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["textual", "fastapi", "uvicorn", "typer", "websockets", "mss", "Xlib", "ray"]


def test_importing_core_loads_no_framework_and_no_plugin() -> None:
    code = (
        "import json, sys; import viewfinder.core; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == []
