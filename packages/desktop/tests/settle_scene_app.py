"""A Tk window for the settle attribution tests; says what happens to it, one line each.

    python settle_scene_app.py target [--later MS]   a canvas at the top-left: Go
        (the left of its top row) recolours the panel at once; a click anywhere else
        changes nothing (with --later, the panel is recoloured MS ms after it)
    python settle_scene_app.py banner [--every MS]   a 300x100 banner at (600, 0) that
        changes colour every MS ms (100) on its own
    python settle_scene_app.py spinner [--late MS] [--stop MS]   a click starts an arc
        turning every 30 ms for ever; its 20th frame (0.6 s in, past the 0.5 s patience
        for a bigger change) comes MS ms (100) late; with --stop, the arc stops after
        about MS ms and the panel is recoloured

Prints ``ready`` once drawn, ``click go`` / ``click blank`` / ``click spin`` for each
click, ``drawn N`` when the panel takes its N-th colour.
"""

from __future__ import annotations

import argparse
import tkinter as tk

COLOURS = ("#d03030", "#30a040", "#3050d0")
BANNER = ("#f0c000", "#00c0f0")
FRAME_MS = 30
LATE_FRAME = 20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("target", "banner", "spinner"))
    parser.add_argument("--later", type=int, default=0)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--late", type=int, default=100)
    parser.add_argument("--stop", type=int, default=0)
    args = parser.parse_args()
    root = tk.Tk()
    root.title(f"scene: {args.mode}")
    if args.mode == "banner":
        root.geometry("300x100+600+0")
        canvas = tk.Canvas(root, width=300, height=100, bg=BANNER[0], highlightthickness=0)
        canvas.pack()
        turn = [0]

        def cycle() -> None:
            turn[0] += 1
            canvas.configure(bg=BANNER[turn[0] % 2])
            root.after(args.every, cycle)

        root.after(args.every, cycle)
    else:
        root.geometry("400x300+0+0")
        canvas = tk.Canvas(root, width=400, height=300, bg="#ffffff", highlightthickness=0)
        canvas.pack()
        canvas.create_rectangle(20, 20, 120, 60, fill="#a0a0a0", outline="")
        panel = canvas.create_rectangle(20, 100, 380, 280, fill="#ffffff", outline="#000000")
        arc = canvas.create_arc(200, 10, 240, 50, start=0, extent=90, fill="#ffffff", outline="")
        drawn = [0]
        frames = [0]

        def recolour() -> None:
            drawn[0] += 1
            canvas.itemconfigure(panel, fill=COLOURS[(drawn[0] - 1) % len(COLOURS)])
            root.update_idletasks()
            print(f"drawn {drawn[0]}", flush=True)

        def spin() -> None:
            frames[0] += 1
            if args.stop and frames[0] * FRAME_MS > args.stop:
                frames[0] = 0  # stopped: the next click starts it again
                canvas.itemconfigure(arc, fill="#ffffff")
                recolour()
                return
            canvas.itemconfigure(arc, start=(frames[0] * 30) % 360, fill="#202020")
            root.after(FRAME_MS + (args.late if frames[0] == LATE_FRAME - 1 else 0), spin)

        def click(event: tk.Event) -> None:
            if args.mode == "spinner":
                print("click spin", flush=True)
                if not frames[0]:
                    spin()
            elif 20 <= event.x < 120 and 20 <= event.y < 60:
                print("click go", flush=True)
                recolour()
            else:
                print("click blank", flush=True)
                if args.later:
                    root.after(args.later, recolour)

        canvas.bind("<Button-1>", click)
    root.after(200, lambda: print("ready", flush=True))
    root.mainloop()


if __name__ == "__main__":
    main()
