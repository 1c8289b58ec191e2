"""Captures are one state of the screen on every path that takes them.

A window repaints itself in one solid colour, then the other, as fast as Tk can, in a
process of its own; every capture of it must hold one colour. The xvfb backend's own
test (plugins/xvfb/tests/test_foreign_displays.py) covers `viewfinder capture`; this
covers the code env's in-code `capture_screenshot()`.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvConfig, CodeEnvironment
from viewfinder.codeenv.displays import FreshDisplays

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


def test_in_code_captures_of_a_repainting_window_are_never_torn() -> None:
    config = CodeEnvConfig(width=640, height=480, max_captures=CAPTURES, timeout_s=240)
    with CodeEnvironment(config, displays=FreshDisplays(640, 480)) as env:
        env.reset()
        obs = env.step(CodeAction(code=STEP, timeout_s=240))
    assert obs.exit_code == 0, obs.stderr
    assert len(obs.screenshots) == CAPTURES
    torn, seen = 0, set()
    for shot in obs.screenshots:
        image = Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
        colours = {rgb for _, rgb in image.getcolors(8) or []}
        seen |= colours
        torn += len(colours) > 1
    assert seen == {(255, 0, 0), (0, 0, 255)}  # it flipped while the code captured
    assert torn == 0
