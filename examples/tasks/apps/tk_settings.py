"""A Tk settings dialog for tasks: Dark mode, Large text, and OK.

    python3 tk_settings.py --out FOLDER/settings.json --log FOLDER/settings.log

OK writes the settings as JSON to ``--out`` and retitles the dialog ``Settings saved``;
every click is logged.
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
    root.title("Settings")
    root.geometry("300x220+0+0")
    options = {"dark_mode": tk.BooleanVar(), "large_text": tk.BooleanVar()}
    for index, (key, variable) in enumerate(options.items()):
        box = tk.Checkbutton(root, text=key.replace("_", " ").capitalize(), variable=variable,
                             anchor="w")  # fmt: skip
        box.place(x=20, y=20 + index * 50, width=200, height=30)
        box.bind("<Button-1>", lambda _, k=key: log.write(f"click {k}\n"), add="+")

    def ok() -> None:
        chosen = {key: variable.get() for key, variable in options.items()}
        args.out.write_text(json.dumps(chosen), encoding="utf-8")
        root.title("Settings saved")

    button = tk.Button(root, text="OK", command=ok)
    button.place(x=20, y=150, width=100, height=40)
    button.bind("<Button-1>", lambda _: log.write("click ok\n"), add="+")
    root.mainloop()


if __name__ == "__main__":
    main()
