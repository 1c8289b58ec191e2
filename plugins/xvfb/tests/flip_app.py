"""A Tk window that repaints itself in one solid colour, then the other, as fast as it can.

``python flip_app.py WIDTH HEIGHT``: the window sits at (0, 0); prints ``ready`` once
shown. A capture of it that holds both colours is a torn frame.
"""

import sys
import tkinter as tk

COLOURS = ("#ff0000", "#0000ff")

width, height = int(sys.argv[1]), int(sys.argv[2])
root = tk.Tk()
root.geometry(f"{width}x{height}+0+0")
state = [0]


def flip() -> None:
    state[0] ^= 1
    root.configure(bg=COLOURS[state[0]])
    root.update_idletasks()
    root.after(1, flip)


root.configure(bg=COLOURS[0])
root.update()
print("ready", flush=True)
flip()
root.mainloop()
