"""A Tk window that repaints in a new colour every few milliseconds (a busy screen)."""

from __future__ import annotations

import itertools
import tkinter as tk


def main() -> None:
    root = tk.Tk()
    root.geometry("400x300+0+0")
    colours = itertools.cycle(f"#{value:02x}{255 - value:02x}80" for value in range(0, 256, 4))

    def repaint() -> None:
        root.configure(bg=next(colours))
        root.after(3, repaint)

    root.update()
    print("ready", flush=True)
    repaint()
    root.mainloop()


if __name__ == "__main__":
    main()
