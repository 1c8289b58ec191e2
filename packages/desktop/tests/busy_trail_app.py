"""A Tk canvas slow to handle pointer motion (30 ms each): prints every point it is
told of while button 1 is held, and "released" at the release. Prints "ready" once
drawn. A busy app is where a toolkit folds queued motions together."""

import time
import tkinter

root = tkinter.Tk()
root.geometry("400x300+0+0")
canvas = tkinter.Canvas(root, width=400, height=300, background="white", highlightthickness=0)
canvas.pack()


def moved(event: tkinter.Event) -> None:
    time.sleep(0.03)
    print(f"at {event.x_root} {event.y_root}", flush=True)


canvas.bind("<B1-Motion>", moved)
canvas.bind("<ButtonRelease-1>", lambda _event: print("released", flush=True))
root.after(300, lambda: print("ready", flush=True))
root.mainloop()
