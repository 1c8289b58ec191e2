"""A Tk pay form for the template-healing tests (Tk exposes no accessibility tree).

Run as ``python pay_form.py LAYOUT``: a 640x480 window at the screen's corner, a grey
canvas filling it and a blue 96x32 "Pay $10" button (13 px DejaVu Sans) at (60, 80).
Every other layout shows it 120 px lower: ``moved`` as it was; ``label:TEXT`` labelled
TEXT; ``recoloured`` red; ``darker`` a darker blue; ``twins`` twice, 200 px apart;
``covered`` with a panel over its right half; ``under-window`` with another window
over its lower half. ``slow`` shows it as ``original`` but takes half a second to handle
a click on it.

It prints "ready" once drawn, then one line per click: ``clicked <button>`` for a
button (its label, or its name where two look the same), ``clicked cover`` for what
covers one, ``clicked canvas`` for the canvas.
"""

from __future__ import annotations

import sys
import time
import tkinter as tk

BACKGROUND = "#ececec"
BLUE, RED = "#2060c0", "#c03030"
#: another blue: each channel 32 off BLUE, a shade darker
DARKER = "#0040a0"
#: the original button's corner and size; the click is recorded at its middle
X, Y, WIDTH, HEIGHT = 60, 80, 96, 32
FONT = ("DejaVu Sans", -13)  # 13 px
DOWN = 120  # how far every changed layout moves the button


def say(line: str) -> None:
    print(line, flush=True)


def button(
    root: tk.Tk, text: str, x: int, y: int, colour: str = BLUE, name: str = "", busy: float = 0
) -> None:
    # flat, with the same colours under the pointer and no focus ring: the pixels do not
    # depend on where the pointer rests or which widget has the focus
    widget = tk.Button(
        root,
        text=text,
        font=FONT,
        bg=colour,
        fg="white",
        activebackground=colour,
        activeforeground="white",
        relief="flat",
        borderwidth=0,
        highlightthickness=0,
        takefocus=0,
        command=lambda: (time.sleep(busy), say(f"clicked {name or text}")),
    )
    widget.place(x=x, y=y, width=WIDTH, height=HEIGHT)


def cover(root: tk.Tk, x: int, y: int) -> None:
    """A dark panel over the right half of a button at (x, y)."""
    panel = tk.Frame(root, bg="#506070")
    panel.place(x=x + WIDTH // 2, y=y - 6, width=WIDTH, height=HEIGHT + 12)
    panel.bind("<Button-1>", lambda _: say("clicked cover"))


def window_over(root: tk.Tk, x: int, y: int) -> None:
    """Another window, without decorations, over the lower half of a button at (x, y)."""
    top = tk.Toplevel(root, bg="#fff8c0")
    top.overrideredirect(True)
    top.geometry(f"{WIDTH + 40}x40+{x - 20}+{y + HEIGHT // 2}")
    top.bind("<Button-1>", lambda _: say("clicked cover"))


def main(layout: str) -> None:
    root = tk.Tk()
    root.geometry("640x480+0+0")
    canvas = tk.Canvas(root, bg=BACKGROUND, highlightthickness=0)
    canvas.place(x=0, y=0, width=640, height=480)
    canvas.bind("<Button-1>", lambda _: say("clicked canvas"))
    down = Y + DOWN
    if layout == "original":
        button(root, "Pay $10", X, Y)
    elif layout == "slow":
        button(root, "Pay $10", X, Y, busy=0.5)
    elif layout == "moved":
        button(root, "Pay $10", X, down)
    elif layout.startswith("label:"):  # label:Pay $18 -- another label where it moved
        button(root, layout.removeprefix("label:"), X, down)
    elif layout == "recoloured":
        button(root, "Pay $10", X, down, RED)
    elif layout == "darker":
        button(root, "Pay $10", X, down, DARKER)
    elif layout == "twins":
        button(root, "Pay $10", X, down, name="Pay $10 left")
        button(root, "Pay $10", X + 200, down, name="Pay $10 right")
    elif layout == "covered":
        button(root, "Pay $10", X, down)
        cover(root, X, down)
    elif layout == "under-window":
        button(root, "Pay $10", X, down)
        root.update()  # the window goes over a drawn form
        window_over(root, X, down)
    else:
        raise SystemExit(f"unknown layout {layout!r}")
    root.update()  # everything drawn, then a moment for the X server to show it
    root.after(200, lambda: say("ready"))
    root.mainloop()


if __name__ == "__main__":
    main(sys.argv[1])
