"""Desktop benchmark: a computer-use action answered with the settled, scaled screen.

    uv run python benchmarks/desktop.py [--rounds N] [--trials N] [--out FILE]

In one run, on one 1920x1080 Xvfb showing the desktop form (examples/desktop_form.py),
the model seeing the screen at 1024x768:

- a click on the form's Apply button (which changes a small swatch) answered with the
  screenshot after it: viewfinder's ComputerTool (settle by DAMAGE, and by polling)
  against the approach of Anthropic's reference implementation (``xdotool mousemove
  --sync X Y click 1``, a fixed 2 s sleep, ``scrot``, ``convert -resize 1024x768!``,
  read and base64), round-robin, ``--rounds`` times each; every returned image is
  checked to show the swatch's new colour;
- settle's guarantee: ``--trials`` clicks on the form's canvas, which repaints 150 ms
  after a click and shows nothing at once; how many returned images show the repaint,
  with the default settle options (DAMAGE) and with polling.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import PIL
from PIL import Image

from viewfinder.desktop import ComputerTool, SettleOptions
from viewfinder.xvfb import Display

sys.path.insert(0, str(Path(__file__).parent))
import desktop_settle

HERE = Path(__file__).parent
FORM = HERE.parent / "examples" / "desktop_form.py"
WIDTH, HEIGHT = 1920, 1080
TARGET = (1024, 768)
REFERENCE_SLEEP_S = 2.0
CANVAS = ((0xE0, 0x40, 0x40), (0x40, 0xA0, 0xE0))  # the canvas's colours, in turn
CONVERT = desktop_settle.CONVERT


class Form(desktop_settle.StateApp):
    """The desktop form on ``display``, its state read from a JSON file."""

    def __init__(self, display: Display, work: Path) -> None:
        state = work / "form.json"
        super().__init__(display, [sys.executable, str(FORM), "--state", str(state)], state)


def rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


def cpu_seconds() -> float:
    """CPU time of this process and of the children it waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def viewfinder_click(tool: ComputerTool, form: Form) -> dict[str, Any]:
    clicks = form.state()["swatch"]["clicks"]
    button = list(tool.scaling.to_model(*form.centre("button")))
    cpu, start = cpu_seconds(), time.perf_counter()
    result = tool({"action": "left_click", "coordinate": button})
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    state = form.wait(lambda s: s["swatch"]["clicks"] == clicks + 1)
    assert result.screenshot is not None and result.settle is not None
    swatch = tool.scaling.to_model(*form.centre("swatch"))
    return {
        "ms": elapsed * 1000,
        "cpu_ms": cpu * 1000,
        "settle_ms": result.settle.waited_s * 1000,
        "shows": result.screenshot.pixel(*swatch) == rgb(state["swatch"]["colour"]),
        "size": result.screenshot.size,
    }


def reference_click(display: Display, form: Form, work: Path) -> dict[str, Any]:
    """Anthropic's reference ComputerTool: a shell command, a fixed sleep, scrot, convert."""
    clicks = form.state()["swatch"]["clicks"]
    scale_x, scale_y = TARGET[0] / WIDTH, TARGET[1] / HEIGHT
    x, y = form.centre("button")
    path = work / "reference.png"
    env = display.env()
    cpu, start = cpu_seconds(), time.perf_counter()
    subprocess.run(f"xdotool mousemove --sync {x} {y} click 1", shell=True, env=env, check=True)
    acted = time.perf_counter()
    time.sleep(REFERENCE_SLEEP_S)
    slept = time.perf_counter()
    subprocess.run(["scrot", "-o", "-p", str(path)], env=env, check=True)
    shot = time.perf_counter()
    subprocess.run(
        [CONVERT, str(path), "-resize", f"{TARGET[0]}x{TARGET[1]}!", str(path)], check=True
    )
    scaled = time.perf_counter()
    data = base64.b64encode(path.read_bytes())
    end = time.perf_counter()
    cpu = cpu_seconds() - cpu
    state = form.wait(lambda s: s["swatch"]["clicks"] == clicks + 1)
    sx, sy = form.centre("swatch")
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        colour = image.convert("RGB").getpixel((round(sx * scale_x), round(sy * scale_y)))
        size = image.size
    return {
        "ms": (end - start) * 1000,
        "cpu_ms": cpu * 1000,
        "parts": {
            "xdotool": (acted - start) * 1000,
            "sleep": (slept - acted) * 1000,
            "scrot": (shot - slept) * 1000,
            "convert": (scaled - shot) * 1000,
            "read + base64": (end - scaled) * 1000,
        },
        "shows": colour == rgb(state["swatch"]["colour"]),
        "size": size,
    }


def canvas_trials(tool: ComputerTool, form: Form, trials: int) -> tuple[int, float]:
    """How many of ``trials`` canvas clicks came back showing the repaint; median ms."""
    canvas = list(tool.scaling.to_model(*form.centre("canvas")))
    tool({"action": "mouse_move", "coordinate": canvas})
    start = form.wait(lambda s: s["canvas"]["painted"] == s["canvas"]["clicks"])
    painted = start["canvas"]["painted"]
    shown, times = 0, []
    for trial in range(trials):
        began = time.perf_counter()
        result = tool({"action": "left_click", "coordinate": canvas})
        times.append((time.perf_counter() - began) * 1000)
        assert result.screenshot is not None
        shown += result.screenshot.pixel(*canvas) == CANVAS[(painted + trial) % 2]
    form.wait(lambda s: s["canvas"]["painted"] == painted + trials)
    return shown, statistics.median(times)


def spread(values: list[float]) -> tuple[str, str]:
    ordered = sorted(values)
    low = ordered[int(0.1 * (len(ordered) - 1))]
    high = ordered[round(0.9 * (len(ordered) - 1))]
    return f"{statistics.median(values):.1f}", f"{low:.1f}-{high:.1f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="clicks per contender")
    parser.add_argument("--trials", type=int, default=40, help="canvas clicks per settle method")
    parser.add_argument("--actions", type=int, default=20, help="actions per settle case")
    parser.add_argument("--memory-actions", type=int, default=1000, help="clicks of the memory run")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "desktop.md")
    args = parser.parse_args()
    for program in ("xdotool", "scrot"):
        if shutil.which(program) is None:
            raise SystemExit(f"{program} is not installed; run `make setup`")
    with (
        tempfile.TemporaryDirectory(prefix="viewfinder-bench-desktop-") as tmp,
        Display(WIDTH, HEIGHT) as display,
    ):
        work = Path(tmp)
        form = Form(display, work)
        try:
            damage = ComputerTool(display, target="XGA")
            polled = ComputerTool(display, target="XGA", settle=SettleOptions(method="poll"))
            try:
                contenders: dict[str, Callable[[], dict[str, Any]]] = {
                    "viewfinder ComputerTool (settle: DAMAGE)": lambda: viewfinder_click(
                        damage, form
                    ),
                    "viewfinder ComputerTool (settle: polling)": lambda: viewfinder_click(
                        polled, form
                    ),
                    "reference: xdotool + sleep 2 s + scrot + convert": lambda: reference_click(
                        display, form, work
                    ),
                }
                for run in contenders.values():  # warm up: imports, first grabs, page cache
                    display.input.move(WIDTH - 10, HEIGHT - 10)
                    time.sleep(0.3)
                    run()
                runs: dict[str, list[dict[str, Any]]] = {name: [] for name in contenders}
                for round_number in range(args.rounds):
                    names = list(contenders)
                    shift = round_number % len(names)
                    for name in names[shift:] + names[:shift]:
                        # Each click starts with the pointer elsewhere (`mousemove --sync`
                        # to where the pointer already is waits for a move that never comes),
                        # past the double-click time of the click before at the same place
                        # (the tool would wait that out inside the timed call)
                        display.input.move(WIDTH - 10, HEIGHT - 10)
                        time.sleep(0.6)
                        runs[name].append(contenders[name]())
                trials = {
                    "DAMAGE (default)": canvas_trials(damage, form, args.trials),
                    "polling": canvas_trials(polled, form, args.trials),
                }
            finally:
                damage.close()
                polled.close()
        finally:
            form.stop()
        cases = desktop_settle.run_cases(display, work, args.actions)
    memory = desktop_settle.run_memory(args.memory_actions)
    text = (
        report(runs, trials, args)
        + "\n\n"
        + desktop_settle.section(cases, memory, args.actions, args.memory_actions)
    )
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")


def report(
    runs: dict[str, list[dict[str, Any]]], trials: dict[str, tuple[int, float]], args: Any
) -> str:
    reference_name = next(name for name in runs if name.startswith("reference"))
    reference = statistics.median(run["ms"] for run in runs[reference_name])
    rows = []
    for name, samples in runs.items():
        times = [run["ms"] for run in samples]
        shows = sum(run["shows"] for run in samples)
        size = "x".join(map(str, samples[0]["size"]))
        rows.append(
            [
                name,
                *spread(times),
                f"{statistics.median(run['cpu_ms'] for run in samples):.1f}",
                f"{shows} of {len(samples)}",
                size,
                f"{reference / statistics.median(times):.1f}",
            ]
        )
    parts = runs[reference_name][0]["parts"]
    breakdown = [
        [part, f"{statistics.median(run['parts'][part] for run in runs[reference_name]):.1f}"]
        for part in parts
    ]
    ours, polled = (runs[name] for name in list(runs)[:2])
    settle_ms = statistics.median(run["settle_ms"] for run in ours)
    our_ms = statistics.median(run["ms"] for run in ours)
    our_cpu = statistics.median(run["cpu_ms"] for run in ours)
    polled_ms = statistics.median(run["ms"] for run in polled)
    polled_cpu = statistics.median(run["cpu_ms"] for run in polled)
    ratio = reference / our_ms
    trial_rows = [
        [method, f"{shown} of {args.trials}", f"{ms:.0f}"] for method, (shown, ms) in trials.items()
    ]
    damage_shown = trials["DAMAGE (default)"][0]
    load = os.getloadavg()[0]
    return "\n\n".join(
        [
            "## Desktop: a computer-use action answered with the settled screen",
            f"`uv run python benchmarks/desktop.py --rounds {args.rounds} --trials {args.trials}`: "
            f"a {WIDTH}x{HEIGHT} Xvfb showing the desktop form (`examples/desktop_form.py`), "
            f"seen by the model at {TARGET[0]}x{TARGET[1]}. The machine has 2 shared cores "
            f"(load average {load:.2f} at the end); Python {platform.python_version()}, "
            f"Pillow {PIL.__version__}. Contenders run round-robin, {args.rounds} clicks each "
            "after a warm-up click.",
            "### A click on Apply (it recolours an 80x36 swatch) until the screenshot is in hand",
            table(
                [
                    "contender",
                    "median ms",
                    "p10-p90 ms",
                    "CPU ms (median)",
                    "image shows the new colour",
                    "image",
                    "x faster than the reference",
                ],
                rows,
            ),
            "viewfinder: read the action, map the point to the screen, click through XTest, "
            "wait until the screen settled (its first change, a change of 2000 pixels or more "
            "or 0.5 s, then 50 ms without one; docs/desktop.md) and answer with the frame "
            "grabbed then (MIT-SHM), shrunk (box filter) and PNG-encoded within the client's "
            "image budget. The pre-action frame is kept "
            "for the trajectory and encoded on a background thread. The reference does what "
            "Anthropic's computer-use demo does: a shell running `xdotool mousemove --sync "
            "X Y click 1`, a fixed 2 s sleep, `scrot -p`, `convert -resize 1024x768!` and "
            "base64 of the file. CPU counts this process and the programs it ran (not the "
            "X server or the form). Each image is checked at the swatch's centre. Before "
            "every click the pointer is parked elsewhere (not timed).",
            "### Where the reference's time goes (median ms)",
            table(["step", "ms"], breakdown),
            "### Settle: a canvas that repaints 150 ms after a click, nothing drawn at once",
            table(
                ["change detection", "images showing the repaint", "median ms per click"],
                trial_rows,
            ),
            "Default settle options: wait up to 0.5 s for the first change, on to 0.5 s "
            "while every change is small, then for 50 ms without one, at most 2 s in all "
            "from the action. The load average says how busy the shared machine was: Tk's "
            "timers slip when it is. Polling grabs the screen every 10 ms and "
            "compares the bytes; DAMAGE has the X server report each repaint, which costs "
            "nothing while waiting.",
            "### Verdict",
            "\n".join(
                [
                    f"- Click to screenshot: {our_ms:.0f} ms against the reference's "
                    f"{reference:.0f} ms: {ratio:.1f}x faster (target ≥ 20x: "
                    f"{'met' if ratio >= 20 else 'missed'}); {settle_ms:.0f} ms of it is the "
                    "settle wait, which holds the capture, scaling and encoding.",
                    f"- Noticing changes: DAMAGE {our_ms:.0f} ms and {our_cpu:.0f} ms CPU per "
                    f"click, polling {polled_ms:.0f} ms and {polled_cpu:.0f} ms CPU: "
                    f"{'DAMAGE' if our_ms <= polled_ms else 'polling'} was faster on this "
                    'click. The default is DAMAGE (`method="auto"`): it costs no CPU while '
                    "waiting, and its rectangles say whose window changed and let a changeless "
                    "action return once the app has answered (see Settle side by side).",
                    f"- Late repaint: {damage_shown} of {args.trials} results showed it (target "
                    f"{args.trials} of {args.trials}: "
                    f"{'met' if damage_shown == args.trials else 'missed'}).",
                ]
            ),
        ]
    )


if __name__ == "__main__":
    main()
