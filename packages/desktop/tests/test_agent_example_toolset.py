"""The Anthropic example with the computer toolset (--toolset) fills in the form too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "desktop_agent_anthropic.py"


def test_the_toolset_example_fills_the_form_with_member_calls(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("ANTHROPIC_API_KEY", "DISPLAY")
    }
    state = tmp_path / "form.json"
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--toolset", "--state", str(state)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the form is filled" in result.stdout
    assert "left_click_drag {'start_coordinate'" in result.stdout  # called as a member
    form = json.loads(state.read_text())
    assert form["entry"]["text"] == "Ada Lovelace"
    assert form["swatch"]["clicks"] == 1
    assert form["list"]["selected"] == ["Item 03"]
