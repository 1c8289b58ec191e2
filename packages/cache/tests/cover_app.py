"""Another application's window lying over a form: a Tk window "Confirm" whose one
button, "Delete all", fills it. Run with the test's Python (tkinter).

``cover_app.py WIDTHxHEIGHT+X+Y`` places it; prints "ready" once drawn, then
"clicked cover Delete all" for every click it gets.
"""

import sys
import tkinter

root = tkinter.Tk()
root.title("Confirm")
root.geometry(sys.argv[1])
tkinter.Button(
    root,
    text="Delete all",
    background="#c02020",
    activebackground="#c02020",
    command=lambda: print("clicked cover Delete all", flush=True),
).pack(fill="both", expand=True)
root.after(300, lambda: print("ready", flush=True))
root.mainloop()
