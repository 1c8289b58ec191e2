"""A Tk entry holding "hello world" that says what is done to it, for the multi-click
tests.

Prints "world X Y" (the screen point in the middle of "world") once drawn, then
"press WIDGET N" for every press of the left button (N: 1, 2 or 3 as Tk counts it;
WIDGET: entry, or window for anywhere else), "selected TEXT" whenever the entry's
selection changes and "text TEXT" when its text does (both looked at every 20 ms: a Tk
entry has no selection event).
"""

import tkinter as tk

root = tk.Tk()
root.geometry("500x200+0+0")
entry = tk.Entry(root, font=("Courier", 30))
entry.insert(0, "hello world")
entry.pack(padx=40, pady=40)
selected = [None]
text_now = [entry.get()]


def pressed(event, count):
    name = "entry" if event.widget is entry else "window"
    print(f"press {name} {count}", flush=True)


for pattern, count in (("<ButtonPress-1>", 1), ("<Double-ButtonPress-1>", 2)):
    root.bind_all(pattern, lambda event, count=count: pressed(event, count), add="+")
root.bind_all("<Triple-ButtonPress-1>", lambda event: pressed(event, 3), add="+")


def look():
    chosen = entry.selection_get() if entry.selection_present() else ""
    if chosen != selected[0]:
        selected[0] = chosen
        print(f"selected {chosen}", flush=True)
    if entry.get() != text_now[0]:
        text_now[0] = entry.get()
        print(f"text {text_now[0]}", flush=True)
    root.after(20, look)


def say_where():
    root.update_idletasks()  # laid out, so the boxes are where they are drawn
    start = entry.get().index("world")
    # the middle of "world", its r (tkinter's Entry.bbox is Misc's grid_bbox: Tk's own)
    box = root.tk.call(str(entry), "bbox", start + 2)
    x, y, width, height = (int(number) for number in root.tk.splitlist(box))
    print(
        f"world {entry.winfo_rootx() + x + width // 2} {entry.winfo_rooty() + y + height // 2}",
        flush=True,
    )
    look()


root.after(300, say_where)
root.mainloop()
