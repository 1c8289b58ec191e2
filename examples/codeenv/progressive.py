"""Progressive captures: one drawing, three moments, three screenshots.

The first capture shows only the blue rectangle, the second adds the red oval, the
third the green bar: each capture shows the screen at the moment it was taken.
"""

import tkinter as tk

root = tk.Tk()
root.title("viewfinder progressive")
root.geometry("400x220+0+0")
canvas = tk.Canvas(root, width=400, height=220, background="white", highlightthickness=0)
canvas.pack()

canvas.create_rectangle(20, 20, 180, 120, fill="#0000ff", outline="")
capture_screenshot()  # noqa: F821 - provided by the code env

canvas.create_oval(200, 20, 360, 120, fill="#ff0000", outline="")
capture_screenshot()  # noqa: F821

canvas.create_rectangle(20, 150, 360, 190, fill="#00c000", outline="")
capture_screenshot()  # noqa: F821
print("three captures")
