"""A small Tk form for the recorder's end-to-end tests (run as a script on an Xvfb).

An entry, a Go button, a scrollable list whose rows each have their own colour, and
four grey patches that change colour when something happens:

- ``go``: blue when the Go button is clicked;
- ``hotkey``: yellow on Ctrl+S;
- ``enter``: red on Enter in the entry when it holds "hello" (black otherwise);
- ``double``: magenta on a double click in the list.

Once it is on the screen it prints one JSON line with the screen rectangles of its
widgets and the row colours, then runs until killed.
"""

from __future__ import annotations

import json
import tkinter as tk

GREY = "#808080"
PATCH_COLOURS = {"go": "#0000ff", "hotkey": "#ffff00", "enter": "#ff0000", "double": "#ff00ff"}
ROWS = 100


def row_colour(index: int) -> str:
    return f"#{(index * 37) % 200 + 40:02x}{(index * 91) % 200 + 40:02x}{(index * 53) % 200:02x}"


def rect(widget: tk.Misc) -> list[int]:
    return [widget.winfo_rootx(), widget.winfo_rooty(), widget.winfo_width(), widget.winfo_height()]


def main() -> None:
    root = tk.Tk()
    root.geometry("640x460+0+0")
    root.configure(bg="#d9d9d9")
    # A caret that does not blink keeps the screen still while nothing happens.
    entry = tk.Entry(
        root,
        font=("DejaVu Sans", 16),
        insertofftime=0,
        relief="flat",
        bg="white",
        fg="black",
        highlightthickness=0,
        borderwidth=0,
    )
    entry.place(x=20, y=20, width=300, height=36)
    patches = {}
    for index, name in enumerate(PATCH_COLOURS):
        patch = tk.Frame(root, bg=GREY, width=40, height=36)
        patch.place(x=410 + index * 50, y=20)
        patches[name] = patch

    def paint(name: str, colour: str | None = None) -> None:
        patches[name].configure(bg=colour or PATCH_COLOURS[name])

    go = tk.Button(root, text="Go", command=lambda: paint("go"))
    go.place(x=330, y=20, width=70, height=36)
    root.bind_all("<Control-s>", lambda _e: paint("hotkey"))
    entry.bind("<Return>", lambda _e: paint("enter", None if entry.get() == "hello" else "#000"))
    listbox = tk.Listbox(
        root,
        font=("DejaVu Sans", 12),
        activestyle="none",
        highlightthickness=0,
        borderwidth=0,
        exportselection=False,
    )
    for index in range(ROWS):
        listbox.insert("end", f"row {index}")
        colour = row_colour(index)
        listbox.itemconfig(index, background=colour, selectbackground=colour)
    listbox.place(x=20, y=80, width=300, height=300)
    listbox.bind("<Double-Button-1>", lambda _e: paint("double"))
    neutral = tk.Frame(root, bg="#d9d9d9", width=200, height=100)
    neutral.place(x=410, y=300)

    def announce() -> None:
        layout = {
            "entry": rect(entry),
            "go": rect(go),
            "listbox": rect(listbox),
            "neutral": rect(neutral),
            "patches": {name: rect(patch) for name, patch in patches.items()},
            "rows": [row_colour(index) for index in range(ROWS)],
        }
        print(json.dumps(layout), flush=True)

    root.update()
    root.after(50, announce)
    root.mainloop()


if __name__ == "__main__":
    main()
