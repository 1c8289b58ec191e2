"""A Tk window that reports the input it receives as JSON lines on stdout.

Run on a display by the input tests: ``python tk_probe.py``. It prints
``{"type": "ready", ...}`` once its window is shown and its Entry has the focus, then
one line per event. Layout (root coordinates, the window sits at 0,0 without a window
manager): an Entry at (10, 10)-(390, 40) and a blue pad at (10, 60)-(390, 290).
"""

import json
import tkinter as tk

root = tk.Tk()
root.geometry("400x300+0+0")
entry = tk.Entry(root)
entry.place(x=10, y=10, width=380, height=30)
pad = tk.Frame(root, bg="#3366cc")
pad.place(x=10, y=60, width=380, height=230)
focused = False


def emit(**fields):
    print(json.dumps(fields), flush=True)


def pointer(kind):
    return lambda e: emit(type=kind, button=e.num, x=e.x_root, y=e.y_root, state=e.state)


pad.bind("<ButtonPress>", pointer("press"))
pad.bind("<ButtonRelease>", pointer("release"))
# Multi-clicks in a bind tag of their own: within one tag Tk fires only the most specific
# binding, and every press must still be reported as a press.
pad.bindtags((*pad.bindtags(), "multi"))
root.bind_class("multi", "<Double-Button-1>", pointer("double"))
root.bind_class("multi", "<Triple-Button-1>", pointer("triple"))
pad.bind("<B1-Motion>", lambda e: emit(type="drag_motion", x=e.x_root, y=e.y_root))
pad.bind("<MouseWheel>", lambda e: emit(type="wheel", delta=e.delta, state=e.state))
# Key reports in a bind tag of their own, ahead of Tk's: the "all" tag's own <Tab>
# binding would otherwise shadow a general <KeyPress> one there.
entry.bindtags(("report", *entry.bindtags()))
root.bind_class(
    "report", "<KeyPress>", lambda e: emit(type="key", keysym=e.keysym, char=e.char, state=e.state)
)
entry.bind("<KeyRelease>", lambda e: emit(type="entry", text=entry.get()), add="+")


def on_focus(_event):
    global focused
    if not focused:
        focused = True
        emit(type="ready", window=root.winfo_id(), frame=int(root.wm_frame(), 16))


entry.bind("<FocusIn>", on_focus)
root.after(10, entry.focus_force)
root.mainloop()
