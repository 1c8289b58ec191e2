"""A small Tk board for the viewer's tests (run as a script on an Xvfb).

A Paint button (turns the patch beside it blue), an entry, a list to scroll, a corner
that turns orange on a right click, and an empty area to drag in. Once on the screen
it prints one JSON line with the screen rectangles of its parts; then one line per
thing that happens to it (``clicked paint``, ``entry <text>``, ``right corner``).
``--offset N`` moves the window N pixels right (the board as a later version of an app
lays it out: what a cache file's check must notice).
"""

from __future__ import annotations

import json
import sys
import tkinter as tk


def say(text: str) -> None:
    print(text, flush=True)


def rect(widget: tk.Misc) -> list[int]:
    return [widget.winfo_rootx(), widget.winfo_rooty(), widget.winfo_width(), widget.winfo_height()]


def main() -> None:
    offset = int(sys.argv[sys.argv.index("--offset") + 1]) if "--offset" in sys.argv else 0
    root = tk.Tk()
    root.geometry(f"640x400+{offset}+0")
    root.configure(bg="#dfe3ea")
    patch = tk.Frame(root, bg="#808080", width=60, height=40)
    patch.place(x=170, y=30)

    def paint() -> None:
        patch.configure(bg="#0000ff")
        say("clicked paint")

    button = tk.Button(root, text="Paint", command=paint, bg="#f4f4f4", activebackground="#f4f4f4")
    button.place(x=30, y=30, width=120, height=40)
    entry = tk.Entry(root, font=("DejaVu Sans", 14), insertofftime=0, relief="flat")
    entry.place(x=30, y=100, width=260, height=34)
    entry.bind("<KeyRelease>", lambda _e: say(f"entry {entry.get()}"))
    listbox = tk.Listbox(root, font=("DejaVu Sans", 12), activestyle="none")
    for index in range(60):
        listbox.insert("end", f"row {index}")
    listbox.place(x=30, y=160, width=200, height=150)
    corner = tk.Frame(root, bg="#c0c0c0", width=140, height=100)
    corner.place(x=300, y=160)

    def right(_event: object) -> None:
        corner.configure(bg="#ff8000")
        say("right corner")

    corner.bind("<Button-3>", right)
    area = tk.Frame(root, bg="#ffffff", width=160, height=120)
    area.place(x=460, y=160)
    root.update()
    layout = {
        "button": rect(button),
        "patch": rect(patch),
        "entry": rect(entry),
        "list": rect(listbox),
        "corner": rect(corner),
        "area": rect(area),
    }
    say(json.dumps(layout))
    root.mainloop()


if __name__ == "__main__":
    sys.exit(main())
