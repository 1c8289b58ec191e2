"""A Tk sign-up form for tasks: a Name entry, a Subscribe box, colour buttons, Save.

    python3 tk_form.py --out FOLDER/form.json --log FOLDER/form.log

Widgets sit at fixed places in a 400x300 window at the screen's top-left corner (no
window manager needed). Every click on a widget is logged (``click save``); Save writes
the form as JSON to ``--out`` and retitles the window ``Saved: NAME``.
"""

from __future__ import annotations

import argparse
import json
import tkinter as tk
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    args = parser.parse_args()
    log = args.log.open("a", buffering=1, encoding="utf-8")
    root = tk.Tk()
    root.title("Sign-up form")
    root.geometry("400x300+0+0")
    name, subscribe = tk.StringVar(), tk.BooleanVar()

    def logged(widget: tk.Widget, label: str) -> None:
        widget.bind("<Button-1>", lambda _: log.write(f"click {label}\n"), add="+")

    def save() -> None:
        form = {"name": name.get(), "subscribe": subscribe.get(), "colour": swatch["bg"]}
        args.out.write_text(json.dumps(form), encoding="utf-8")
        log.write(f"saved {name.get()}\n")
        root.title(f"Saved: {name.get()}")

    def paint(colour: str) -> None:
        swatch.configure(bg=colour)

    tk.Label(root, text="Name").place(x=20, y=20, width=60, height=30)
    entry = tk.Entry(root, textvariable=name)
    entry.place(x=90, y=20, width=200, height=30)
    logged(entry, "name")
    box = tk.Checkbutton(root, text="Subscribe", variable=subscribe, anchor="w")
    box.place(x=20, y=70, width=150, height=30)
    logged(box, "subscribe")
    for index, colour in enumerate(("red", "blue")):
        button = tk.Button(root, text=colour.title(), command=lambda c=colour: paint(c))
        button.place(x=20 + index * 90, y=120, width=80, height=30)
        logged(button, colour)
    swatch = tk.Frame(root, bg="#808080")
    swatch.place(x=220, y=120, width=60, height=60)
    save_button = tk.Button(root, text="Save", command=save)
    save_button.place(x=20, y=200, width=100, height=40)
    logged(save_button, "save")
    root.mainloop()


if __name__ == "__main__":
    main()
