"""An observation keeps within its byte budget: the newest captures, and a note of the rest."""

from __future__ import annotations

import json
from collections.abc import Callable

from PIL import Image

from viewfinder.codeenv import CodeAction, CodeEnvironment, CodeObservation, observation_payload
from viewfinder.codeenv.config import MiB
from viewfinder.codeenv.models import observation_from_payload, observation_json

# Six captures of 320x240 noise (about 300 kB of base64 each) with a block whose red
# level is the capture's number: more than fit in 1 MiB.
NOISY_CAPTURES = """
import base64, io, os, tkinter as tk
from PIL import Image
root = tk.Tk()
root.overrideredirect(True)
root.geometry("320x300+0+0")
noise = Image.frombytes("RGB", (320, 240), os.urandom(320 * 240 * 3))
buffer = io.BytesIO()
noise.save(buffer, "PNG")
photo = tk.PhotoImage(data=base64.b64encode(buffer.getvalue()))
canvas = tk.Canvas(root, width=320, height=300, highlightthickness=0, bd=0)
canvas.pack()
canvas.create_image(0, 0, image=photo, anchor="nw")
block = canvas.create_rectangle(0, 250, 320, 300, width=0)
for number in range(6):
    canvas.itemconfigure(block, fill="#%02x0000" % (40 * number + 20))
    root.update()
    capture_screenshot(region=(0, 0, 320, 300))
"""


def test_the_newest_captures_are_kept_within_the_budget(
    make_env: Callable[..., CodeEnvironment], png: Callable[[str], Image.Image]
) -> None:
    env = make_env(observation_bytes=1 * MiB)
    env.reset()
    observation = env.step(CodeAction(code=NOISY_CAPTURES, timeout_s=60))
    assert observation.exit_code == 0, observation.stderr
    dropped = observation.metadata["screenshots_dropped"]
    kept = observation.screenshots
    assert 1 <= len(kept) < 6 and dropped["kept"] == len(kept)
    assert dropped["count"] + len(kept) == 6
    assert dropped["capture_indices"] == list(range(1, dropped["count"] + 1))  # the oldest
    assert dropped["limit_bytes"] == 1 * MiB
    reds = [png(shot).getpixel((160, 275))[0] for shot in kept]
    assert reds == [40 * number + 20 for number in range(6 - len(kept), 6)]
    payload = observation_payload(observation, deduplicated=True)
    assert len(str(payload)) < 1 * MiB
    # asked for, the last capture travels once, and comes back on reading
    assert "screenshot" not in payload["observation"]
    assert observation_from_payload(payload).screenshot == kept[-1] == observation.screenshot
    # by default it is where OpenEnv's clients read it
    assert observation_payload(observation)["observation"]["screenshot"] == kept[-1]


def test_within_the_budget_nothing_is_dropped(make_env: Callable[..., CodeEnvironment]) -> None:
    env = make_env()
    env.reset()
    observation = env.step(CodeAction(code=NOISY_CAPTURES, timeout_s=60))
    assert len(observation.screenshots) == 6
    assert "screenshots_dropped" not in observation.metadata


def test_observation_json_is_the_json_of_the_payload(
    make_env: Callable[..., CodeEnvironment],
) -> None:
    env = make_env()
    env.reset()
    observation = env.step(CodeAction(code=NOISY_CAPTURES + "print('done \\u00e9\\n\\x00')"))
    for wrap in (None, lambda payload: {"type": "observation", "data": payload}):
        for deduplicated in (False, True):
            expected = observation_payload(observation, deduplicated=deduplicated)
            assert json.loads(observation_json(observation, wrap, deduplicated=deduplicated)) == (
                wrap(expected) if wrap else expected
            )
    plain = CodeObservation(stdout="no captures")
    assert observation_json(plain) == json.dumps(observation_payload(plain))
