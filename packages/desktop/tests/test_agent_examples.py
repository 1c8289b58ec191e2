"""The agent examples of docs/desktop.md run without an API key and fill in the form."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from viewfinder.core import Screenshot

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("example", ["desktop_agent_anthropic.py", "desktop_agent_openai.py"])
def test_the_example_fills_the_form_with_its_scripted_policy(example: str, tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DISPLAY")
    }
    state, frames = tmp_path / "form.json", tmp_path / "frames"
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / example), "--state", str(state), "--out", str(frames)],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "policy: scripted" in result.stdout
    assert "the form is filled" in result.stdout
    # the form's own record of what happened to it
    form = json.loads(state.read_text())
    assert form["entry"]["text"] == "Ada Lovelace"
    assert form["swatch"]["clicks"] == 1
    assert 40 <= form["slider"] <= 60
    assert form["list"]["selected"] == ["Item 03"]
    # every step's screenshot, scaled for the model; the last shows the swatch turned red
    saved = sorted(frames.glob("*.png"))
    assert len(saved) == 6
    last = Screenshot.from_file(saved[-1])
    assert last.size == (1024, 768)
    red = last.pixel(144, 84)  # the swatch's middle (180, 88 on the screen), scaled
    assert red[0] > 180 and red[1] < 90 and red[2] < 90
