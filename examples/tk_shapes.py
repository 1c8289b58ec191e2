"""A small Tk window with coloured shapes at known places (used by the demo and tests).

Blue rectangle at (20, 20)-(180, 120), red oval in (200, 20)-(360, 120), green bar at
(20, 150)-(360, 190), and a line of text. The window sits at (0, 0), 400x220.
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
canvas.create_text(200, 205, text="viewfinder sees this window", fill="black")
root.mainloop()
