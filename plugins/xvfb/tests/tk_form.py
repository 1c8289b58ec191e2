"""A Tk form (a field and a button): Tk implements no AT-SPI. Prints "ready" when shown."""

import tkinter as tk

root = tk.Tk()
root.title("Tk form")
root.geometry("300x120+0+0")
tk.Entry(root).pack(padx=10, pady=10)
tk.Button(root, text="Save").pack()
root.after(100, lambda: print("ready", flush=True))
root.mainloop()
