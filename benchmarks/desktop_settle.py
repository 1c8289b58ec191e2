"""Settle on apps that draw the way real ones do, and the memory of a long run.

Used by ``benchmarks/desktop.py`` (which writes the section). Each case of
``examples/settle_apps.py`` runs on the benchmark's 1920x1080 display, seen at 1024x768:
``--actions`` clicks on Go (or typings of 1000 characters for ``text``) answered by
viewfinder's ComputerTool and by the reference loop (xdotool, a fixed 2 s sleep, scrot,
convert). A result is a final frame when it shows what the app shows once its effect is
done (the panel's colour; the text box, pixel for pixel, once the app read every key).

The memory figure runs in a child process of its own: ``--memory-actions`` clicks on a
panel that changes colour every click, with and without a session folder, RSS at the end.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.desktop import ComputerTool, SettleOptions
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
APPS = HERE.parent / "examples" / "settle_apps.py"
sys.path.insert(0, str(APPS.parent))
from settle_apps import panel_colour  # noqa: E402

# The first `convert` on PATH may be a wrapper script; time ImageMagick's own.
CONVERT = next(
    (
        path
        for path in ("/usr/bin/convert", shutil.which("convert"))
        if path and os.path.exists(path)
    ),
    "convert",
)

CASES = ("two-step", "caret", "spinner", "text", "repaint", "instant")
#: The reference types at xdotool's 12 ms a key: a 1000-character case takes 12 s each.
REFERENCE_TEXT_ACTIONS = 3
TEXT = "\n".join(f"{line:02d} " + "abcdefghij" * 4 + "klmnopq"[: line % 7] for line in range(22))


def rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


class StateApp:
    """An example app on ``display`` that writes its state as JSON to ``state_path``
    and prints ``ready`` once it is drawn."""

    def __init__(self, display: Display, command: list[str], state_path: Path) -> None:
        self.state_path = state_path
        self.process = subprocess.Popen(
            command, env=display.env(), stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"
        self.layout = self.state()["layout"]

    def state(self) -> dict[str, Any]:
        for _ in range(200):
            try:
                return json.loads(self.state_path.read_text())
            except (OSError, ValueError):
                time.sleep(0.01)
        raise RuntimeError("the app's state cannot be read")

    def wait(self, check: Callable[[dict[str, Any]], bool], timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.state()
            if check(state):
                return state
            time.sleep(0.01)
        raise RuntimeError("the app did not get to the state the benchmark waits for")

    def centre(self, name: str) -> tuple[int, int]:
        x, y, width, height = self.layout[name]
        return (x + width // 2, y + height // 2)

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


class App(StateApp):
    """One mode of examples/settle_apps.py."""

    def __init__(self, display: Display, work: Path, mode: str) -> None:
        state = work / f"{mode}.json"
        super().__init__(display, [sys.executable, str(APPS), mode, "--state", str(state)], state)

    def reach(self, key: str, value: int) -> None:
        """Wait until the state's ``key`` is ``value`` (a long text takes seconds)."""
        self.wait(lambda state: state[key] == value, timeout=60)


def _typed() -> int:
    return sum(char.isprintable() for char in TEXT)


def ours(tool: ComputerTool, app: App, mode: str) -> dict[str, Any]:
    if mode == "text":
        tool({"action": "key", "text": "Escape"})
        app.reach("chars", 0)
        start = time.perf_counter()
        result = tool({"action": "type", "text": TEXT})
        elapsed = time.perf_counter() - start
        app.reach("chars", _typed())
        time.sleep(0.2)
        box = tuple(app.layout["text"])
        later = tool.screenshot().to_pil()
        assert result.screenshot is not None
        shown = result.screenshot.to_pil()
        crop = (box[0], box[1], box[0] + box[2], box[1] + box[3])
        final = shown.crop(crop).tobytes() == later.crop(crop).tobytes()
    else:
        effects = app.state()["effects"]
        tool({"action": "mouse_move", "coordinate": [1000, 700]})
        time.sleep(0.2)
        button = list(tool.scaling.to_model(*app.centre("button")))
        start = time.perf_counter()
        result = tool({"action": "left_click", "coordinate": button})
        elapsed = time.perf_counter() - start
        app.reach("effects", effects + 1)
        assert result.screenshot is not None
        panel = tool.scaling.to_model(*app.centre("panel"))
        final = result.screenshot.pixel(*panel) == rgb(panel_colour(effects + 1))
    assert result.settle is not None
    return {
        "ms": elapsed * 1000,
        "final": final,
        "still_changing": not result.settle.settled,
        # the wait ends when the last select() past the deadline returns: a few ms late
        "within": result.settle.waited_s <= result.settle.deadline_s + 0.05,
    }


def reference(display: Display, app: App, mode: str, work: Path) -> dict[str, Any]:
    env = display.env()
    path = work / "reference.png"
    if mode == "text":
        subprocess.run(["xdotool", "key", "Escape"], env=env, check=True)
        app.reach("chars", 0)
        start = time.perf_counter()
        for chunk in [TEXT[i : i + 50] for i in range(0, len(TEXT), 50)]:
            subprocess.run(["xdotool", "type", "--delay", "12", "--", chunk], env=env, check=True)
    else:
        effects = app.state()["effects"]
        subprocess.run(["xdotool", "mousemove", "1900", "1060"], env=env, check=True)
        time.sleep(0.2)
        x, y = app.centre("button")
        start = time.perf_counter()
        subprocess.run(f"xdotool mousemove --sync {x} {y} click 1", shell=True, env=env, check=True)
    time.sleep(2.0)
    subprocess.run(["scrot", "-o", "-p", str(path)], env=env, check=True)
    subprocess.run([CONVERT, str(path), "-resize", "1024x768!", str(path)], check=True)
    data = path.read_bytes()
    elapsed = time.perf_counter() - start
    with Image.open(io.BytesIO(data)) as image:
        shown = image.convert("RGB")
    if mode == "text":
        app.reach("chars", _typed())
        time.sleep(0.2)
        subprocess.run(["scrot", "-o", "-p", str(path)], env=env, check=True)
        subprocess.run([CONVERT, str(path), "-resize", "1024x768!", str(path)], check=True)
        with Image.open(path) as image:
            later = image.convert("RGB")
        final = shown.tobytes() == later.tobytes()
    else:
        app.reach("effects", effects + 1)
        px, py = app.centre("panel")
        final = shown.getpixel((px * 1024 // 1920, py * 768 // 1080)) == rgb(
            panel_colour(effects + 1)
        )
    return {"ms": elapsed * 1000, "final": final}


def run_cases(display: Display, work: Path, actions: int) -> dict[str, dict[str, list[Any]]]:
    """Every case, ours and the reference's: the per-action samples."""
    results: dict[str, dict[str, list[Any]]] = {}
    for mode in CASES:
        app = App(display, work, mode)
        try:
            with ComputerTool(display, target="XGA") as tool:
                ours(tool, app, mode)  # warm-up: imports, first grabs
                mine = [ours(tool, app, mode) for _ in range(actions)]
            count = REFERENCE_TEXT_ACTIONS if mode == "text" else actions
            theirs = [reference(display, app, mode, work) for _ in range(count)]
        finally:
            app.stop()
        results[mode] = {"ours": mine, "reference": theirs}
        print(mode, sum(r["final"] for r in mine), sum(r["final"] for r in theirs), flush=True)
    return results


def memory_child(actions: int, record: bool) -> None:
    """Run ``actions`` clicks that change a 480x360 panel on a 1920x1080 screen; print
    the peak RSS in MB as JSON."""
    with tempfile.TemporaryDirectory() as tmp, Display(1920, 1080) as display:
        app = App(display, Path(tmp), "instant")
        options = SettleOptions(timeout=0.5, change_timeout=0.2, patience=0.0)
        start_rss = _memory_mb("VmRSS")
        try:
            with ComputerTool(
                display,
                target="XGA",
                settle=options,
                record_to=Path(tmp) / "run" if record else None,
            ) as tool:
                button = list(tool.scaling.to_model(*app.centre("button")))
                for _ in range(actions):
                    tool({"action": "left_click", "coordinate": button})
                frames = tool.step_log.frames_held()
        finally:
            app.stop()
        peak = _memory_mb("VmHWM")
        print(json.dumps({"start_mb": start_rss, "peak_mb": peak, "frames": frames}))


def _memory_mb(field: str) -> float:
    """A size from /proc/self/status (VmRSS now, VmHWM the peak), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def run_memory(actions: int) -> dict[str, dict[str, float]]:
    figures = {}
    for record in (False, True):
        out = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(actions)]
            + (["--record"] if record else []),
            capture_output=True,
            text=True,
            check=True,
        )
        figures["session folder" if record else "memory only"] = json.loads(
            out.stdout.strip().splitlines()[-1]
        )
    return figures


def section(
    results: dict[str, dict[str, list[Any]]],
    memory: dict[str, Any],
    actions: int,
    memory_actions: int,
) -> str:
    rows, all_ours, all_ref = [], [], []
    for mode, runs in results.items():
        mine, theirs = runs["ours"], runs["reference"]
        ours_ms = statistics.median(r["ms"] for r in mine)
        ref_ms = statistics.median(r["ms"] for r in theirs)
        all_ours += [r["ms"] for r in mine]
        all_ref += [r["ms"] for r in theirs]
        changing = sum(r["still_changing"] for r in mine)
        within = sum(r["within"] for r in mine)
        rows.append(
            f"| {mode} | {sum(r['final'] for r in mine)} of {len(mine)} | {ours_ms:.0f} | "
            f"{sum(r['final'] for r in theirs)} of {len(theirs)} | {ref_ms:.0f} | "
            f"{ref_ms / ours_ms:.1f} | {changing} still changing; {within} of {len(mine)} "
            "within the deadline |"
        )
    overall = statistics.median(all_ref) / statistics.median(all_ours)
    memory_rows = [
        f"| {name} | {fig['start_mb']:.0f} | {fig['peak_mb']:.0f} | {fig['frames']} |"
        for name, fig in memory.items()
    ]
    return "\n\n".join(
        [
            "### Settle on apps that draw in steps (`examples/settle_apps.py`)",
            f"{actions} actions per case with viewfinder's ComputerTool (default settle "
            f"options), against the reference loop ({REFERENCE_TEXT_ACTIONS} actions for "
            "text: it types at xdotool's 12 ms a key). A final frame shows what the app "
            "shows once its effect is done: the panel's colour, or the text box pixel for "
            "pixel once the app has read every key. two-step: Tk's relief at once, the "
            "panel 250 ms later; caret: a caret blinking every 100 ms, the panel 150 ms "
            "later; spinner: an arc turning every 30 ms for ever, the panel at once; text: "
            f"{len(TEXT)} characters in 22 lines; repaint: nothing at once, the panel 150 ms "
            "later; instant: the panel at once. Deadline: actions whose wait ended within "
            "its deadline (+50 ms for the last select() to return), and how many said the "
            "screen was still changing.",
            "| case | viewfinder final frames | viewfinder median ms | reference final "
            "frames | reference median ms | x faster | deadline |\n|---|---|---|---|---|---|---|\n"
            + "\n".join(rows),
            f"Median over every action of every case: {overall:.1f}x faster than the reference "
            "(target ≥ 8x).",
            f"### Memory of a long run: {memory_actions} clicks, each changing the "
            "1920x1080 screen",
            "| step log | RSS at start MB | peak RSS MB | frames held in memory |\n"
            "|---|---|---|---|\n" + "\n".join(memory_rows),
            "Without a session folder the step log keeps the frames of the last 32 steps; "
            "with one, frames are written to it and read back when asked for (target: "
            "peak under 300 MB).",
        ]
    )


if __name__ == "__main__":
    if "--memory-child" in sys.argv:
        count = int(sys.argv[sys.argv.index("--memory-child") + 1])
        memory_child(count, "--record" in sys.argv)
