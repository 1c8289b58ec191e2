"""Captures are one state of the screen on every path that takes them.

A window repaints itself in one solid colour, then the other, as fast as Tk can, in a
process of its own; every capture of it must hold one colour. The xvfb backend's own
test (plugins/xvfb/tests/test_foreign_displays.py) covers `viewfinder capture`; this
covers the code env's in-code `capture_screenshot()` and the recorder's live frames.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeEnvironment
from viewfinder.codeenv.displays import FreshDisplays
from viewfinder.core import Screenshot, hookimpl, register_plugin, unregister_plugin
from viewfinder.recorder import Recorder, load_session
from viewfinder.xvfb import Display

ROOT = Path(__file__).resolve().parent.parent
FLIP_APP = (ROOT / "plugins" / "xvfb" / "tests" / "flip_app.py").read_text()
CAPTURES = 200

STEP = f"""
import subprocess, sys
app = subprocess.Popen([sys.executable, "-c", {FLIP_APP!r}, "600", "400"],
                       stdout=subprocess.PIPE, text=True)
assert app.stdout.readline().strip() == "ready"
try:
    for _ in range({CAPTURES}):
        capture_screenshot(region=(0, 0, 600, 400))
finally:
    app.kill()
    app.wait()
"""


def colours(image: Image.Image) -> set[tuple[int, int, int]]:
    return {rgb for _, rgb in image.convert("RGB").getcolors(8) or []}


def test_in_code_captures_of_a_repainting_window_are_never_torn() -> None:
    config = CodeEnvConfig(width=640, height=480, max_captures=CAPTURES, timeout_s=240)
    with CodeEnvironment(config, displays=FreshDisplays(640, 480)) as env:
        env.reset()
        obs = env.step(CodeAction(code=STEP, timeout_s=240))
    assert obs.exit_code == 0, obs.stderr
    assert len(obs.screenshots) == CAPTURES
    torn, seen = 0, set()
    for shot in obs.screenshots:
        found = colours(Image.open(io.BytesIO(base64.b64decode(shot))))
        seen |= found
        torn += len(found) > 1
    assert seen == {(255, 0, 0), (0, 0, 255)}  # it flipped while the code captured
    assert torn == 0


class _LiveFrames:
    """Every distinct live frame the recorder announces through the capture hook."""

    def __init__(self) -> None:
        self.frames: list[Screenshot] = []

    @hookimpl
    def viewfinder_screenshot_captured(
        self, screenshot: Screenshot, context: Mapping[str, Any]
    ) -> None:
        self.frames.append(screenshot)


def test_the_recorders_live_frames_of_a_repainting_window_are_never_torn(tmp_path: Path) -> None:
    live = _LiveFrames()
    register_plugin(live, name="untorn-live-frames")
    flip = str(ROOT / "plugins" / "xvfb" / "tests" / "flip_app.py")
    try:
        with Display(600, 400) as display:
            app = subprocess.Popen(
                [sys.executable, flip, "600", "400"],
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "DISPLAY": display.name},
            )
            try:
                assert app.stdout is not None and app.stdout.readline().strip() == "ready"
                recorder = Recorder(
                    tmp_path / "session", "xvfb", backend_options={"display": display.name},
                    interval=0.01,
                )  # fmt: skip
                with recorder:
                    deadline = time.monotonic() + 60
                    clicks = 0
                    while len(live.frames) < CAPTURES and time.monotonic() < deadline:
                        recorder.click(10 + clicks % 500, 10)
                        clicks += 1
                        time.sleep(0.02)
            finally:
                app.kill()
                app.wait()
    finally:
        unregister_plugin("untorn-live-frames")
    assert len(live.frames) >= CAPTURES
    seen: set[tuple[int, int, int]] = set()
    torn = 0
    for frame in live.frames:
        found = colours(frame.to_pil())
        seen |= found
        torn += len(found) > 1
    assert seen == {(255, 0, 0), (0, 0, 255)}
    assert torn == 0
    # the frames saved beside the manifest, each paired with a click, are whole too
    steps = load_session(tmp_path / "session").steps
    assert len(steps) == clicks
    assert all(len(colours(step.frame.to_pil())) == 1 for step in steps if step.frame is not None)
