"""Settle ping benchmark: what asking the app whether it handled an action costs and buys.

    uv run python benchmarks/settle_ping.py [--repeat N] [--busy N] [--out FILE]

Side by side, alternating, in one run, on an Xvfb display with a Tk canvas that flips
its colour at once on a click: a ComputerTool click as shipped (a ``_NET_WM_PING`` sent
behind the action, waited for only when nothing changed by the first-change wait) and
the same tool with the ping left out. Then a busy app: the canvas's process stopped
(SIGSTOP) for 0.8 s around the click, as a loaded machine holds an app; how many results
show the click's effect with and without the ping.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from viewfinder.desktop import ComputerTool
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

APP = r"""
import tkinter
root = tkinter.Tk()
root.geometry("300x200+0+0")
canvas = tkinter.Canvas(root, width=300, height=200, background="#ff0000", highlightthickness=0)
canvas.pack()
state = [0]
def flip(_event):
    state[0] ^= 1
    canvas.configure(background="#0000ff" if state[0] else "#ff0000")
canvas.bind("<Button-1>", flip)
root.after(300, lambda: print("ready", flush=True))
root.mainloop()
"""
CLICK = {"action": "left_click", "coordinate": [150, 100]}


def timed(function: Any) -> float:
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument("--busy", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {"click, with the ping": [], "click, no ping": []}
    shown = {"with the ping": 0, "no ping": 0}
    with (
        Display(300, 200) as display,
        LoggedApp([sys.executable, "-c", APP], display.env()) as app,
        ComputerTool(display) as tool,
    ):
        shipped = tool._ask_handled
        for _ in range(args.repeat):
            # each click past the double-click time of the one before at the same place
            # (the tool would wait that out inside the timed call)
            time.sleep(0.6)
            tool._ask_handled = shipped  # type: ignore[method-assign]
            samples["click, with the ping"].append(timed(lambda: tool(CLICK)))
            time.sleep(0.6)
            tool._ask_handled = lambda *_: None  # type: ignore[method-assign]
            samples["click, no ping"].append(timed(lambda: tool(CLICK)))
        for _ in range(args.busy):
            for name, ask in (("with the ping", shipped), ("no ping", lambda *_: None)):
                tool._ask_handled = ask  # type: ignore[method-assign]
                before = tool.screenshot().pixel(150, 100)
                os.kill(app.process.pid, signal.SIGSTOP)
                timer = threading.Timer(0.8, os.kill, (app.process.pid, signal.SIGCONT))
                timer.start()
                result = tool(CLICK)
                timer.join()
                time.sleep(0.3)  # the held click is drawn before the next round
                assert result.screenshot is not None
                shown[name] += result.screenshot.pixel(150, 100) != before
                tool({"action": "wait", "duration": 0.05})  # takes in the late change
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["click, no ping"]
    lines = [
        "## Settle: asking a busy app whether it handled the action",
        "",
        f"`uv run python benchmarks/settle_ping.py --repeat {args.repeat} --busy {args.busy}`: "
        f"alternating in one run, {os.cpu_count()} cores; a Tk canvas that flips its colour "
        "at once on a click, on a 300x200 Xvfb.",
        "",
        "| an instant click | median ms | min-max ms | x no ping |",
        "|---|---:|---:|---:|",
    ]
    for name, values in samples.items():
        lines.append(
            f"| {name} | {medians[name]:.1f} | {min(values):.1f}-{max(values):.1f} | "
            f"{medians[name] / base:.3f} |"
        )
    lines += [
        "",
        "| the app stopped 0.8 s around the click | results showing the click's effect |",
        "|---|---:|",
        f"| with the ping | {shown['with the ping']} of {args.busy} |",
        f"| no ping (the wait for a first change ends at 0.5 s) | {shown['no ping']} of "
        f"{args.busy} |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
