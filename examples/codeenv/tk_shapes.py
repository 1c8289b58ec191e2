"""Tk shapes, captured once while the window is alive.

Run it in the code env (``viewfinder exec examples/codeenv/tk_shapes.py``), where
``capture_screenshot()`` needs no import. Blue rectangle (20, 20)-(180, 120), red oval
in (200, 20)-(360, 120), green bar (20, 150)-(360, 190); the window is at (0, 0), 400x220.
"""

import tkinter as tk

root = tk.Tk()
root.title("viewfinder shapes")
root.geometry("400x220+0+0")
canvas = tk.Canvas(root, width=400, height=220, background="white", highlightthickness=0)
canvas.pack()
canvas.create_rectangle(20, 20, 180, 120, fill="#0000ff", outline="")
canvas.create_oval(200, 20, 360, 120, fill="#ff0000", outline="")
canvas.create_rectangle(20, 150, 360, 190, fill="#00c000", outline="")
canvas.create_text(200, 205, text="captured inside the code", fill="black")

png = capture_screenshot()  # noqa: F821 - provided by the code env
print(f"captured {len(png)} base64 characters")
