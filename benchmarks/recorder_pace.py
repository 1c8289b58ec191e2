"""The recorder at any pace and on any display: part of benchmarks/recorder.py.

- Staleness: clicks on a toggle ``gap`` ms apart (20 per gap); a click is paired right
  when its frame shows the state the click flipped, i.e. the screen just before it.
  With the live frame following repaints (XDamage) and polling only, side by side.
- Idle CPU on a plain ``Xvfb :N`` started here (not one of viewfinder's displays) at
  1920x1080 with a still window, with and without following repaints.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.recorder import PairingSettings, Recorder, X11RecordInput
from viewfinder.recorder import run as recorder_run

CLICKS = 20
OFF, ON = (0x20, 0x40, 0xC0), (0xE0, 0x80, 0x20)
TOGGLE = r"""
import sys, tkinter as tk
root = tk.Tk(); root.geometry("300x200+0+0")
patch = tk.Frame(root, bg="#2040c0", width=120, height=80); patch.place(x=20, y=20)
state = [False]
def flip(_e):
    state[0] = not state[0]
    patch.configure(bg="#e08020" if state[0] else "#2040c0")
patch.bind("<Button-1>", flip)
root.after(300, lambda: print("ready", flush=True))
root.mainloop()
"""


@contextmanager
def polling_only(enabled: bool) -> Iterator[None]:
    """Record without following repaints (the live frame polled every interval)."""
    original: Callable[..., Any] = recorder_run._follow_damage
    if enabled:
        recorder_run._follow_damage = lambda backend, frames: None  # type: ignore[assignment]
    try:
        yield
    finally:
        recorder_run._follow_damage = original  # type: ignore[assignment]


@contextmanager
def app(env: dict[str, str], script: str) -> Iterator[None]:
    process = subprocess.Popen(
        [sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        yield
    finally:
        process.kill()
        process.wait(10)


def paired_right(display: Any, work: Path, gap_ms: int, polling: bool) -> int:
    """Of CLICKS clicks ``gap_ms`` apart, how many got the frame from just before them."""
    folder = work / f"pace-{gap_ms}-{'poll' if polling else 'damage'}"
    settings = PairingSettings(double_click_interval=0, fsync=False)
    with (
        app(display.env(), TOGGLE),
        polling_only(polling),
        Recorder(
            folder,
            "xvfb",
            backend_options={"display": display.name},
            input_source=X11RecordInput(display.name),
            settings=settings,
        ) as recorder,
    ):
        subprocess.run(
            [
                "xdotool",
                "mousemove",
                "80",
                "60",
                "click",
                "--repeat",
                str(CLICKS),
                "--delay",
                str(gap_ms),
                "1",
            ],
            env=display.env(),
            check=True,
        )
        deadline = time.monotonic() + 30
        while recorder.events < CLICKS and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the toggle's last repaint, before the app goes
    right = 0
    for seq in range(CLICKS):
        with Image.open(folder / "screenshots" / f"{seq}.png") as frame:
            colour = frame.convert("RGB").getpixel((30, 30))
        right += colour == (OFF if seq % 2 == 0 else ON)
    return right


def staleness_rows(display: Any, work: Path, gaps: tuple[int, ...]) -> list[list[str]]:
    rows = []
    for gap in gaps:
        damage = paired_right(display, work, gap, polling=False)
        polled = paired_right(display, work, gap, polling=True)
        rows.append([f"{gap} ms", f"{damage} of {CLICKS}", f"{polled} of {CLICKS}"])
    return rows


@contextmanager
def plain_xvfb(width: int, height: int) -> Iterator[tuple[str, int]]:
    """``Xvfb :N`` as a user would start it by hand; yields its name and pid."""
    for number in range(180, 260):
        if not Path(f"/tmp/.X11-unix/X{number}").exists():
            break
    name = f":{number}"
    process = subprocess.Popen(
        ["Xvfb", name, "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not Path(f"/tmp/.X11-unix/X{number}").exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"Xvfb {name} did not start")
            time.sleep(0.05)
        time.sleep(0.3)
        yield name, process.pid
    finally:
        process.terminate()
        process.wait(10)


def idle_cpu_rows(
    scene: str, width: int, height: int, window: float, repeat: int
) -> list[list[str]]:
    """Idle recording CPU (% of one core) on a plain Xvfb, following repaints or polling."""
    rows = []
    with plain_xvfb(width, height) as (name, _pid), tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DISPLAY": name}
        scene_proc = subprocess.Popen(
            [sys.executable, "-c", scene, str(width), str(height), "0"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert scene_proc.stdout is not None and scene_proc.stdout.readline().strip()
            time.sleep(0.5)
            for label, polling in (("follows repaints (XDamage)", False), ("polls", True)):
                with (
                    polling_only(polling),
                    Recorder(
                        Path(tmp) / label.split()[0],
                        "xvfb",
                        backend_options={"display": name},
                        input_source=X11RecordInput(name),
                        interval=0.5,
                    ),
                ):
                    time.sleep(1.0)
                    shares = []
                    for _ in range(repeat):
                        cpu0, wall0 = time.process_time(), time.monotonic()
                        time.sleep(window)
                        shares.append(
                            100 * (time.process_time() - cpu0) / (time.monotonic() - wall0)
                        )
                rows.append(
                    [
                        label,
                        f"{statistics.median(shares):.2f}",
                        f"{min(shares):.2f}-{max(shares):.2f}",
                    ]
                )
        finally:
            scene_proc.kill()
            scene_proc.wait(10)
    return rows
