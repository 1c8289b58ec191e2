"""Two Tk apps for ``benchmarks/settle_peers.py``, beside ``examples/settle_apps.py``.

    python benchmarks/settle_peers_apps.py spinner --state FILE [--late-frame N]
    python benchmarks/settle_peers_apps.py banner

``spinner``: the window of ``examples/settle_apps.py`` (Go, a panel) where a click on Go
turns an arc every 30 ms for 1 s, then recolours the panel and stops the arc; with
``--late-frame N`` the N-th frame of each spin comes 100 ms late. It writes ``effects``
and ``layout`` to the state file as the other apps do. ``banner``: a 300x100 window at
(1560, 40) that changes colour every second on its own, as an ad or a status banner does.
Both print ``ready`` once drawn.
"""

from __future__ import annotations

import argparse
import sys
import tkinter as tk
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from desktop_form import write_state
from settle_apps import BACKGROUND, FONT, panel_colour

FRAME_MS = 30
SPIN_MS = 1000
BANNER_COLOURS = ("#f0c000", "#00a0e0", "#e03080")


def spinner(state_path: Path, late_frame: int) -> None:
    root = tk.Tk()
    root.title("settle: 1 s spinner")
    root.geometry("900x640+0+0")
    root.configure(bg=BACKGROUND)
    state: dict[str, object] = {"effects": 0, "layout": {}}
    panel = tk.Frame(root, bg=panel_colour(0))
    panel.place(x=20, y=80, width=480, height=360)
    canvas = tk.Canvas(root, width=48, height=48, bg=BACKGROUND, highlightthickness=0)
    canvas.place(x=140, y=14)
    arc = canvas.create_arc(6, 6, 44, 44, start=0, extent=90, fill=BACKGROUND, outline="")
    spin = {"frame": 0, "left_ms": 0}

    def turn() -> None:
        spin["frame"] += 1
        if spin["left_ms"] <= 0:  # done: the work's result, the arc gone
            canvas.itemconfigure(arc, fill=BACKGROUND)
            state["effects"] = int(state["effects"]) + 1  # type: ignore[call-overload]
            panel.configure(bg=panel_colour(int(state["effects"])))  # type: ignore[call-overload]
            root.update_idletasks()
            write_state(state_path, state)
            return
        canvas.itemconfigure(arc, start=spin["frame"] * 30 % 360, fill="#202020")
        delay = FRAME_MS + (100 if spin["frame"] == late_frame else 0)
        spin["left_ms"] -= delay
        root.after(delay, turn)

    def go() -> None:
        spin["frame"], spin["left_ms"] = 0, SPIN_MS
        turn()

    button = tk.Button(root, text="Go", font=FONT, command=go)
    button.place(x=20, y=20, width=100, height=36)

    def ready() -> None:
        root.update_idletasks()
        state["layout"] = {
            name: [w.winfo_rootx(), w.winfo_rooty(), w.winfo_width(), w.winfo_height()]
            for name, w in (("button", button), ("panel", panel), ("spinner", canvas))
        }
        write_state(state_path, state)
        print("ready", flush=True)

    root.after(100, ready)
    root.mainloop()


def banner() -> None:
    root = tk.Tk()
    root.title("banner")
    root.geometry("300x100+1560+40")
    label = tk.Label(root, text="Sale!", font=FONT, bg=BANNER_COLOURS[0])
    label.pack(fill="both", expand=True)
    turn = [0]

    def cycle() -> None:
        turn[0] += 1
        label.configure(bg=BANNER_COLOURS[turn[0] % len(BANNER_COLOURS)])
        root.after(1000, cycle)

    root.after(1000, cycle)
    root.after(100, lambda: print("ready", flush=True))
    root.mainloop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("spinner", "banner"))
    parser.add_argument("--state", type=Path)
    parser.add_argument("--late-frame", type=int, default=0)
    args = parser.parse_args()
    if args.mode == "spinner":
        spinner(args.state, args.late_frame)
    else:
        banner()


if __name__ == "__main__":
    main()
