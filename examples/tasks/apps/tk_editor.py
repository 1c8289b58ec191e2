"""A Tk text editor for tasks: a Save button above the text of one file.

    python3 tk_editor.py FILE --log LOG

The window (600x400 at the screen's top-left corner) is titled ``Editor - NAME``; Save
writes the text back to FILE and logs ``saved NAME``; every click is logged.
"""

from __future__ import annotations

import argparse
import tkinter as tk
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", type=Path)
    parser.add_argument("--log", type=Path, required=True)
    args = parser.parse_args()
    log = args.log.open("a", buffering=1, encoding="utf-8")
    root = tk.Tk()
    root.title(f"Editor - {args.file.name}")
    root.geometry("600x400+0+0")
    text = tk.Text(root, font=("TkFixedFont", 12))
    text.insert("1.0", args.file.read_text(encoding="utf-8") if args.file.exists() else "")
    text.place(x=0, y=50, width=600, height=350)
    text.bind("<Button-1>", lambda _: log.write("click text\n"), add="+")

    def save() -> None:
        args.file.write_text(text.get("1.0", "end-1c"), encoding="utf-8")
        log.write(f"saved {args.file.name}\n")

    button = tk.Button(root, text="Save", command=save)
    button.place(x=10, y=5, width=80, height=36)
    button.bind("<Button-1>", lambda _: log.write("click save\n"), add="+")
    root.mainloop()


if __name__ == "__main__":
    main()
