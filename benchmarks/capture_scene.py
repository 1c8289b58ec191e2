"""A busy, text-heavy frame for the capture benchmark: run it on a display.

``python capture_scene.py WIDTH HEIGHT`` fills a full-screen Tk canvas with coloured
boxes, lines and many lines of small coloured text (a seeded random layout, the same
every run), prints ``ready`` once it has drawn, and then waits to be killed.
"""

import random
import sys
import tkinter as tk

WORDS = [
    "capture",
    "frame",
    "display",
    "region",
    "window",
    "pixel",
    "agent",
    "screenshot",
    "trajectory",
    "replay",
    "recorder",
    "manifest",
    "viewfinder",
    "xvfb",
    "shared",
    "memory",
    "framebuffer",
    "encode",
    "png",
    "base64",
    "def",
    "return",
    "import",
    "class",
    "self",
    "async",
    "await",
    "lambda",
    "yield",
    "None",
    "True",
    "False",
    "0x1f",
    "404",
]
COLOURS = [
    "#1b1b1b",
    "#c0392b",
    "#2980b9",
    "#27ae60",
    "#8e44ad",
    "#d35400",
    "#16a085",
    "#2c3e50",
    "#f39c12",
    "#7f8c8d",
]
FILLS = ["#fdfefe", "#eaf2f8", "#fef9e7", "#e8f8f5", "#f5eef8", "#fbeee6", "#f4f6f6"]


def main() -> None:
    width, height = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(42)
    root = tk.Tk()
    root.geometry(f"{width}x{height}+0+0")
    canvas = tk.Canvas(root, width=width, height=height, background="white", highlightthickness=0)
    canvas.pack()
    # panels like an IDE or a browser: filled boxes with borders
    for _ in range(40):
        x, y = rng.randrange(width), rng.randrange(height)
        w, h = rng.randrange(80, 400), rng.randrange(40, 240)
        canvas.create_rectangle(
            x, y, x + w, y + h, fill=rng.choice(FILLS), outline=rng.choice(COLOURS)
        )
    for _ in range(60):
        canvas.create_line(
            rng.randrange(width),
            rng.randrange(height),
            rng.randrange(width),
            rng.randrange(height),
            fill=rng.choice(COLOURS),
            width=2,
        )
    for _ in range(30):
        x, y, r = rng.randrange(width), rng.randrange(height), rng.randrange(8, 40)
        canvas.create_oval(x - r, y - r, x + r, y + r, fill=rng.choice(COLOURS), outline="")
    # lines of text, top to bottom, like source code or a page of results
    y = 4
    while y < height:
        x = 4 + rng.randrange(0, 60)
        while x < width:
            word = rng.choice(WORDS)
            item = canvas.create_text(
                x,
                y,
                text=word,
                anchor="nw",
                fill=rng.choice(COLOURS),
                font=("TkFixedFont", rng.choice((8, 9, 10))),
            )
            x = canvas.bbox(item)[2] + rng.randrange(4, 12)
        y += rng.choice((12, 13, 14))
    root.update()
    print("ready", flush=True)
    root.mainloop()


if __name__ == "__main__":
    main()
