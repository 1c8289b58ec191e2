"""A Tk canvas that turns from white to blue 150 ms after a click on it. Prints
"ready" once drawn and "painted" after each repaint."""

import tkinter

root = tkinter.Tk()
root.geometry("300x200+0+0")
canvas = tkinter.Canvas(root, width=300, height=200, background="white", highlightthickness=0)
canvas.pack()


def paint() -> None:
    canvas.configure(background="#0000ff")
    root.update_idletasks()
    print("painted", flush=True)


canvas.bind("<Button-1>", lambda _event: root.after(150, paint))
root.after(300, lambda: print("ready", flush=True))
root.mainloop()
