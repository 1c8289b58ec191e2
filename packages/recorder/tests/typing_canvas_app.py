"""A Tk app that says what it received: typed text per line, and drags on a canvas.

Run as a script on an Xvfb. An entry at the top: on Return it prints the entry's text
(``{"typed": ...}``) and clears it. A canvas below: a left-button press, the motion
while it is held and the release are printed as ``{"drag": {"press": [x, y], "release":
[x, y], "moves": n}}`` in screen coordinates. A toggle patch flips between two colours
on each click (``{"toggle": state}``). Once drawn it prints ``{"ready": layout}``.
"""

from __future__ import annotations

import json
import tkinter as tk


def emit(**fields: object) -> None:
    print(json.dumps(fields, ensure_ascii=False), flush=True)


def main() -> None:
    root = tk.Tk()
    root.geometry("640x480+0+0")
    root.configure(bg="#d9d9d9")
    entry = tk.Entry(
        root,
        font=("DejaVu Sans", 16),
        insertofftime=0,
        relief="flat",
        bg="white",
        highlightthickness=0,
        borderwidth=0,
    )
    entry.place(x=20, y=20, width=400, height=36)

    def typed(_event: object) -> None:
        emit(typed=entry.get())
        entry.delete(0, "end")

    entry.bind("<Return>", typed)
    canvas = tk.Canvas(root, bg="#f0f0e0", highlightthickness=0)
    canvas.place(x=20, y=80, width=600, height=380)
    drag: dict[str, object] = {}

    def press(event: tk.Event) -> None:  # type: ignore[type-arg]
        drag.clear()
        drag.update(press=[event.x_root, event.y_root], moves=0)

    def move(event: tk.Event) -> None:  # type: ignore[type-arg]
        drag["moves"] = int(drag.get("moves", 0)) + 1  # type: ignore[call-overload]

    def release(event: tk.Event) -> None:  # type: ignore[type-arg]
        drag["release"] = [event.x_root, event.y_root]
        emit(drag=dict(drag))

    canvas.bind("<ButtonPress-1>", press)
    canvas.bind("<B1-Motion>", move)
    canvas.bind("<ButtonRelease-1>", release)
    toggle = tk.Frame(root, bg="#2040c0", width=60, height=36)
    toggle.place(x=450, y=20)
    state = {"on": False}

    def flip(_event: object) -> None:
        state["on"] = not state["on"]
        toggle.configure(bg="#e08020" if state["on"] else "#2040c0")
        emit(toggle=state["on"])

    toggle.bind("<Button-1>", flip)

    def announce() -> None:
        emit(
            ready={
                "entry": [20, 20, 400, 36],
                "canvas": [20, 80, 600, 380],
                "toggle": [450, 20, 60, 36],
            }
        )

    root.update()
    root.after(100, announce)
    root.mainloop()


if __name__ == "__main__":
    main()
