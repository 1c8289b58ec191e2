"""A Tk window filling the screen that logs everything done to it, one line per event.

Four coloured targets (red, green, blue, yellow) spread over the screen, a text entry
and a pad. Prints ``layout {json}`` (each widget's screen box ``[x, y, w, h]``) and
``ready`` once drawn, then, flushed at once:

    press WIDGET BUTTON MODS      release WIDGET BUTTON
    double WIDGET                 triple WIDGET
    key KEYSYM MODS               keyup KEYSYM SECONDS   (how long it was held)
    motion WIDGET X Y             (screen point; the pad only, while button 1 is down)
    enter WIDGET                  text TEXT              (the entry's text, when it changes)

MODS is ``+``-joined held modifiers or ``-``. Wheel clicks are presses of buttons 4-7.
"""

import json
import time
import tkinter as tk

root = tk.Tk()
width, height = root.winfo_screenwidth(), root.winfo_screenheight()
root.geometry(f"{width}x{height}+0+0")
root.configure(background="#ffffff")
side = min(width, height) // 6
widgets = {}
for name, colour, fx, fy in (
    ("red", "#d02020", 0.08, 0.12),
    ("green", "#20a020", 0.80, 0.12),
    ("blue", "#2040d0", 0.08, 0.62),
    ("yellow", "#e0c000", 0.80, 0.62),
):
    frame = tk.Frame(root, background=colour, width=side, height=side)
    frame.place(x=int(width * fx), y=int(height * fy))
    widgets[name] = frame
entry = tk.Entry(root, font=("DejaVu Sans", 14))
entry.place(x=int(width * 0.35), y=int(height * 0.12), width=int(width * 0.3), height=40)
widgets["entry"] = entry
pad = tk.Frame(root, background="#808080", width=int(width * 0.3), height=side)
pad.place(x=int(width * 0.35), y=int(height * 0.62))
widgets["pad"] = pad
names = {str(widget): name for name, widget in widgets.items()}
_MODS = (("shift", 0x1), ("ctrl", 0x4), ("alt", 0x8))
pressed_at = {}
text_now = [""]


def say(line):
    print(line, flush=True)


def name_of(event):
    return names.get(str(event.widget), "window")


def mods(event):
    held = [name for name, bit in _MODS if event.state & bit]
    return "+".join(held) or "-"


root.bind_all("<ButtonPress>", lambda e: say(f"press {name_of(e)} {e.num} {mods(e)}"), add="+")
root.bind_all("<ButtonRelease>", lambda e: say(f"release {name_of(e)} {e.num}"), add="+")
root.bind_all("<Double-ButtonPress-1>", lambda e: say(f"double {name_of(e)}"), add="+")
root.bind_all("<Triple-ButtonPress-1>", lambda e: say(f"triple {name_of(e)}"), add="+")


def key_down(event):
    if event.keysym not in pressed_at:
        pressed_at[event.keysym] = time.monotonic()
    say(f"key {event.keysym} {mods(event)}")


def key_up(event):
    started = pressed_at.pop(event.keysym, time.monotonic())
    say(f"keyup {event.keysym} {time.monotonic() - started:.2f}")


root.bind_all("<KeyPress>", key_down, add="+")
root.bind_all("<KeyRelease>", key_up, add="+")
pad.bind("<B1-Motion>", lambda e: say(f"motion pad {e.x_root} {e.y_root}"))
for name in ("red", "green", "blue", "yellow"):
    widgets[name].bind("<Enter>", lambda e, n=name: say(f"enter {n}"))


def look():
    if entry.get() != text_now[0]:
        text_now[0] = entry.get()
        say(f"text {text_now[0]}")
    root.after(20, look)


def ready():
    root.update_idletasks()
    layout = {
        name: [w.winfo_rootx(), w.winfo_rooty(), w.winfo_width(), w.winfo_height()]
        for name, w in widgets.items()
    }
    say("layout " + json.dumps(layout))
    root.focus_force()
    say("ready")
    look()


root.after(300, ready)
root.mainloop()
