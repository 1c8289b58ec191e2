"""A Tk window whose widgets show late: its handler of the window's own mapping takes
0.4 s (an app loading its settings as it opens), and Tk's placer maps the button only
after that, when the app gets back to its event loop.

    python slow_to_map_app.py LOG

A press on the button writes ``pressed`` to LOG.
"""

from __future__ import annotations

import sys
import time
import tkinter as tk

log = open(sys.argv[1], "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (open for the app's life)
root = tk.Tk()
root.geometry("320x240+0+0")
button = tk.Button(root, text="Go", command=lambda: log.write("pressed\n"))
button.place(x=100, y=100, width=120, height=40)
mapped = []


def on_map(event: tk.Event) -> None:  # type: ignore[type-arg]
    if event.widget is root and not mapped:
        mapped.append(True)
        time.sleep(0.4)


root.bind("<Map>", on_map)
root.mainloop()
