"""The peers of ``benchmarks/settle_peers.py``, run in an environment of their own.

    uv run --no-project --with pyautogui==0.9.54 --with mss==10.2.0 --with pillow \
        python benchmarks/settle_peers_child.py

Reads one JSON request a line on standard input and answers each with one JSON line
(``{"ms": ...}``: from before the action to the 1024x768 PNG written to ``out``):

- ``pyautogui``: ``pyautogui.click(x, y)`` (or ``pyautogui.write(text)``) with its
  default 0.1 s pause, a fixed ``time.sleep(0.5)``, ``pyautogui.screenshot()``, resized
  to 1024x768 and saved as PNG;
- ``poll``: the same input without the pause, then an ``mss`` grab of the screen every
  0.1 s until two grabs in a row are equal (at most 2 s), resized and saved as PNG.

The parent runs it with ``XDG_SESSION_TYPE=x11`` (pyscreeze then grabs with
``scrot``) and an empty ``XAUTHORITY`` file (Xvfb asks for none). ``"do": "grab"``
writes the screen the peer's way, without an action (untimed checks).
"""

from __future__ import annotations

import json
import sys
import time

import mss
import pyautogui
from PIL import Image

SIZE = (1024, 768)
SLEEP_S = 0.5
POLL_S = 0.1
POLL_MOST_S = 2.0


def main() -> None:
    pyautogui.FAILSAFE = False
    with (getattr(mss, "MSS", None) or mss.mss)() as screen:
        monitor = screen.monitors[1]

        def grab() -> bytes:
            return bytes(screen.grab(monitor).raw)

        def save(raw: bytes, out: str) -> None:
            image = Image.frombytes(
                "RGB", (monitor["width"], monitor["height"]), raw, "raw", "BGRX"
            )
            image.resize(SIZE).save(out, "PNG")

        for line in sys.stdin:
            request = json.loads(line)
            peer, do, out = request["peer"], request["do"], request["out"]
            start = time.perf_counter()
            pause = peer == "pyautogui"
            if do == "click":
                pyautogui.click(request["x"], request["y"], _pause=pause)
            elif do == "type":
                pyautogui.write(request["text"], _pause=pause)
            if peer == "pyautogui":
                if do != "grab":
                    time.sleep(SLEEP_S)
                pyautogui.screenshot().resize(SIZE).save(out, "PNG")
            else:
                last = grab()
                if do != "grab":
                    until = time.perf_counter() + POLL_MOST_S
                    while time.perf_counter() < until:
                        time.sleep(POLL_S)
                        frame = grab()
                        if frame == last:
                            break
                        last = frame
                save(last, out)
            elapsed = (time.perf_counter() - start) * 1000
            print(json.dumps({"ms": elapsed}), flush=True)


if __name__ == "__main__":
    main()
