"""A Tk Text that keeps the characters its key events carry and reports them on F12.

Run on a display by the input tests: ``python tk_text_probe.py``. It prints
``{"type": "ready"}`` once its Text has the focus; on F12 it prints
``{"type": "text", "text": <the Text's content>, "keys": <the characters of every
KeyPress, in order>, "keysyms": <how many key presses carried a keysym Tk knows>}``.
Nothing is printed per key, so a long text costs the app no more than typing it.
"""

import json
import tkinter as tk

root = tk.Tk()
root.geometry("400x300+0+0")
text = tk.Text(root)
text.place(x=0, y=0, width=400, height=300)
keys: list[str] = []
focused = False


def emit(**fields):
    print(json.dumps(fields), flush=True)


def on_key(event):
    if event.keysym == "F12":
        emit(type="text", text=text.get("1.0", "end-1c"), keys="".join(keys))
        return "break"
    keys.append(event.char)
    return None


def on_focus(_event):
    global focused
    if not focused:
        focused = True
        emit(type="ready", window=root.winfo_id())


text.bindtags(("report", *text.bindtags()))
root.bind_class("report", "<KeyPress>", on_key)
text.bind("<FocusIn>", on_focus)
root.after(10, text.focus_force)
root.mainloop()
