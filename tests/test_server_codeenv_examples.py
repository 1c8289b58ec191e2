"""End to end: the example programs through a server, captures seen by an in-process observer."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvConfig
from viewfinder.core import Screenshot, hookimpl
from viewfinder.server import CodingEnv, ServerSettings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "codeenv"


def _image(b64: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(b64))).convert("RGB")


def test_examples_over_the_wire_with_the_capture_hook(
    viewfinder_plugin: Callable[..., str],
) -> None:
    seen: list[dict[str, Any]] = []

    class Observer:
        @hookimpl
        def viewfinder_screenshot_captured(
            self, screenshot: Screenshot, context: Mapping[str, Any]
        ) -> None:
            seen.append({**context, "size": screenshot.size})

    viewfinder_plugin(Observer(), name="e2e-capture-observer")
    settings = ServerSettings(
        pool_size=1,
        display_width=640,
        display_height=480,
        codeenv=CodeEnvConfig(timeout_s=120, width=640, height=480),
    )
    with CodingEnv.local(settings) as env:
        first = env.reset().observation
        session_id = first.metadata["session_id"]
        expected = {
            "tk_shapes.py": ((100, 70), (0, 0, 255), 1),
            "progressive.py": ((190, 170), (0, 192, 0), 3),  # the last capture has the bar
            "matplotlib_plot.py": None,
            "pygame_scene.py": ((100, 100), (0, 255, 255), 1),
        }
        for step, (name, check) in enumerate(expected.items(), start=1):
            result = env.step(CodeAction(code=(EXAMPLES / name).read_text()))
            observation = result.observation
            assert observation.exit_code == 0, f"{name}: {observation.stderr}"
            assert observation.screenshot == observation.screenshots[-1]
            if check is not None:
                (x, y), colour, count = check
                assert len(observation.screenshots) == count
                assert _image(observation.screenshot or "").getpixel((x, y)) == colour
            captures = [c for c in seen if c["step"] == step]
            assert len(captures) == len(observation.screenshots), name
            assert {c["session_id"] for c in captures} == {session_id}
    assert [c["capture_index"] for c in seen if c["step"] == 2] == [1, 2, 3]
