"""A small Tk form for driving with computer-use actions (the desktop demo, tests, benchmark).

    python -m viewfinder.desktop.sample_form [--state FILE] [--shift-button PX]
    python examples/desktop_form.py ...      (the same, from a checkout)

Widgets at fixed places in a window at the screen's top-left corner (no window manager
needed): a text entry, an Apply button whose click changes the colour of a swatch, a
slider, a list of 50 items that scrolls, a label showing the last key combination
pressed, a hover patch, a pad that shows mouse presses and keeps the path of a drag, and
a canvas that repaints 150 ms after a click (and shows nothing at once).

With ``--state FILE`` the app writes its whole state as JSON to FILE (atomically) after
every change, including where each widget is on the screen (``layout``: ``[x, y, width,
height]``). It prints ``ready`` on stdout once it is drawn and has the keyboard focus.
``--shift-button PX`` moves the Apply button PX pixels down (its swatch stays), so a
fresh app looks different where the button was and the same everywhere else.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
import tkinter as tk
from pathlib import Path
from typing import Any

#: Colours the swatch takes, one per click of Apply, in turn (it starts grey).
SWATCH_COLOURS = ("#d03030", "#30a040", "#3050d0")
SWATCH_START = "#808080"
#: Colours the canvas takes 150 ms after each click, in turn (it starts white).
CANVAS_COLOURS = ("#e04040", "#40a0e0")
CANVAS_DELAY_MS = 150
HOVER_OFF, HOVER_ON = "#a0a0a0", "#f0c000"
PAD_UP, PAD_DOWN = "#b0b0b0", "#202020"
BACKGROUND = "#ececec"
FONT = ("DejaVu Sans", 12)
_MODIFIER_BITS = (("ctrl", 0x4), ("alt", 0x8), ("super", 0x40), ("shift", 0x1))


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` as JSON to ``path`` at once: a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=Path, help="write the app's state as JSON here")
    parser.add_argument("--shift-button", type=int, default=0, help="move Apply down (px)")
    args = parser.parse_args()
    Form(args.state, args.shift_button).run()


class Form:
    """The window, its widgets and the state written after every change."""

    def __init__(self, state_path: Path | None, shift: int) -> None:
        self.state_path = state_path
        self.root = tk.Tk()
        self.root.title("viewfinder desktop form")
        self.root.geometry("780x500+0+0")
        self.root.configure(bg=BACKGROUND)
        self.state: dict[str, Any] = {
            "version": 0,
            "entry": {"text": "", "selection": None},
            "swatch": {"colour": SWATCH_START, "clicks": 0},
            "slider": 0,
            "list": {"top": 0, "selected": []},
            "last_key": None,
            "held": None,
            "hover": False,
            "pad": {"pressed": False, "left": 0, "right": 0, "middle": 0, "double": 0},
            "trail": [],
            "wheel": None,
            "canvas": {"clicks": 0, "painted": 0, "colour": "#ffffff"},
        }
        self._build(shift)
        self._pressed_at: dict[str, float] = {}

    # -- widgets -----------------------------------------------------------------------

    def _build(self, shift: int) -> None:
        root = self.root
        tk.Label(root, text="Name", bg=BACKGROUND, font=FONT).place(x=20, y=24)
        self.entry = tk.Entry(
            root, font=("DejaVu Sans", 14), insertofftime=0, highlightthickness=0, bg="white"
        )
        self.entry.place(x=80, y=20, width=300, height=30)
        self.entry.bind("<KeyRelease>", lambda _e: self._entry_changed(), add="+")
        self.entry.bind("<ButtonRelease-1>", lambda _e: self._entry_changed(), add="+")

        self.button = tk.Button(root, text="Apply", font=FONT, command=self._apply)
        self.button.place(x=20, y=70 + shift, width=100, height=36)
        self.swatch = tk.Frame(root, bg=SWATCH_START)
        self.swatch.place(x=140, y=70, width=80, height=36)

        self.slider = tk.Scale(
            root,
            from_=0,
            to=100,
            orient="horizontal",
            sliderlength=30,
            showvalue=False,
            highlightthickness=0,
            command=lambda value: self._set("slider", int(float(value))),
        )
        self.slider.place(x=20, y=140, width=360, height=30)

        self.listbox = tk.Listbox(root, font=FONT, highlightthickness=0, exportselection=False)
        for number in range(50):
            self.listbox.insert("end", f"Item {number:02d}")
        self.listbox.place(x=20, y=200, width=200, height=220)
        self.listbox.configure(yscrollcommand=lambda *_: self._list_changed())
        self.listbox.bind("<<ListboxSelect>>", lambda _e: self._list_changed())

        self.keys = tk.Label(root, text="keys: -", bg="white", anchor="w", font=FONT)
        self.keys.place(x=240, y=200, width=260, height=30)
        # On the window's own tag: Tk's "all" tag has <Alt-Key> bindings of its own, which
        # win over a plain <KeyPress> there.
        root.bind("<KeyPress>", self._key_pressed, add="+")
        root.bind("<KeyRelease>", self._key_released, add="+")

        self.hover = tk.Frame(root, bg=HOVER_OFF)
        self.hover.place(x=240, y=250, width=120, height=60)
        self.hover.bind("<Enter>", lambda _e: self._hover(True))
        self.hover.bind("<Leave>", lambda _e: self._hover(False))

        self.pad = tk.Frame(root, bg=PAD_UP)
        self.pad.place(x=240, y=330, width=260, height=140)
        # every press on the pad shows: the counts, in a line under it
        self.pad_counts = tk.Label(
            root, text="", bg=BACKGROUND, anchor="w", font=("DejaVu Sans", 9)
        )
        self.pad_counts.place(x=240, y=474, width=260, height=20)
        for button, name in ((1, "left"), (2, "middle"), (3, "right")):
            self.pad.bind(f"<ButtonPress-{button}>", functools.partial(self._pad_press_of, name))
        self.pad.bind("<ButtonRelease-1>", lambda _e: self._pad_release())
        self.pad.bind("<B1-Motion>", self._pad_motion)
        self.pad.bind("<Double-Button-1>", lambda _e: self._pad_count("double"), add="+")
        # every other button (wheel clicks 4-7 included) is reported as it comes
        root.bind_all("<ButtonPress>", self._any_button, add="+")

        self.canvas = tk.Canvas(root, bg="white", highlightthickness=0)
        self.canvas.place(x=420, y=20, width=340, height=160)
        self.canvas.bind("<ButtonPress-1>", lambda _e: self._canvas_clicked())

    # -- handlers ---------------------------------------------------------------------

    def _apply(self) -> None:
        swatch = self.state["swatch"]
        colour = SWATCH_COLOURS[swatch["clicks"] % len(SWATCH_COLOURS)]
        swatch["clicks"] += 1
        swatch["colour"] = colour
        self.swatch.configure(bg=colour)
        self._save()

    def _entry_changed(self) -> None:
        selection = None
        if self.entry.selection_present():
            selection = [self.entry.index("sel.first"), self.entry.index("sel.last")]
        self.state["entry"] = {"text": self.entry.get(), "selection": selection}
        self._save()

    def _list_changed(self) -> None:
        self.state["list"] = {
            "top": self.listbox.nearest(0),
            "selected": [self.listbox.get(i) for i in self.listbox.curselection()],
        }
        self._save()

    def _key_pressed(self, event: tk.Event) -> None:
        self._pressed_at.setdefault(event.keysym, time.monotonic())
        held = [name for name, bit in _MODIFIER_BITS if int(event.state) & bit]
        combo = "+".join([*held, event.keysym])
        self.keys.configure(text=f"keys: {combo}")
        self.state["last_key"] = combo
        self._save()

    def _key_released(self, event: tk.Event) -> None:
        pressed = self._pressed_at.pop(event.keysym, None)
        if pressed is not None:
            seconds = round(time.monotonic() - pressed, 3)
            self.state["held"] = {"key": event.keysym, "seconds": seconds}
            self._save()

    def _hover(self, inside: bool) -> None:
        self.hover.configure(bg=HOVER_ON if inside else HOVER_OFF)
        self._set("hover", inside)

    def _show_pad_counts(self) -> None:
        pad = self.state["pad"]
        self.pad_counts.configure(
            text=" ".join(
                f"{name[0].upper()}{pad[name]}" for name in ("left", "middle", "right", "double")
            )
        )

    def _pad_press_of(self, name: str, event: tk.Event) -> None:
        self._pad_press(event, name)

    def _pad_press(self, event: tk.Event, name: str) -> None:
        pad = self.state["pad"]
        pad[name] += 1
        self._show_pad_counts()
        if name == "left":
            pad["pressed"] = True
            self.pad.configure(bg=PAD_DOWN)
            self.state["trail"] = [[event.x_root, event.y_root]]
        self._save()

    def _pad_release(self) -> None:
        self.state["pad"]["pressed"] = False
        self.pad.configure(bg=PAD_UP)
        self._save()

    def _pad_motion(self, event: tk.Event) -> None:
        self.state["trail"].append([event.x_root, event.y_root])
        self._save()

    def _pad_count(self, name: str) -> None:
        self.state["pad"][name] += 1
        self._show_pad_counts()
        self._save()

    def _any_button(self, event: tk.Event) -> None:
        if int(event.num) < 4:
            return
        held = [name for name, bit in _MODIFIER_BITS if int(event.state) & bit]
        widget = next(
            (name for name, w in self._named().items() if str(event.widget) == str(w)), "other"
        )
        self.state["wheel"] = {"button": int(event.num), "modifiers": held, "widget": widget}
        self._save()

    def _canvas_clicked(self) -> None:
        self.state["canvas"]["clicks"] += 1
        self._save()
        self.root.after(CANVAS_DELAY_MS, self._canvas_repaint)

    def _canvas_repaint(self) -> None:
        canvas = self.state["canvas"]
        colour = CANVAS_COLOURS[canvas["painted"] % len(CANVAS_COLOURS)]
        canvas["painted"] += 1
        canvas["colour"] = colour
        self.canvas.configure(bg=colour)
        self._save()

    # -- state ------------------------------------------------------------------------

    def _named(self) -> dict[str, tk.Misc]:
        return {
            "entry": self.entry,
            "button": self.button,
            "swatch": self.swatch,
            "slider": self.slider,
            "list": self.listbox,
            "keys": self.keys,
            "hover": self.hover,
            "pad": self.pad,
            "canvas": self.canvas,
        }

    def _layout(self) -> dict[str, list[int]]:
        return {
            name: [w.winfo_rootx(), w.winfo_rooty(), w.winfo_width(), w.winfo_height()]
            for name, w in self._named().items()
        }

    def _set(self, key: str, value: Any) -> None:
        if self.state.get(key) != value:
            self.state[key] = value
            self._save()

    def _save(self) -> None:
        self.state["version"] += 1
        if self.state_path is not None:
            write_state(self.state_path, self.state)

    def _ready(self) -> None:
        self.root.focus_force()  # keys reach the form wherever the pointer is
        self.entry.focus_set()
        self.root.update_idletasks()
        self.state["layout"] = self._layout()
        self._save()
        print("ready", flush=True)

    def run(self) -> None:
        self.root.after(100, self._ready)
        self.root.mainloop()


if __name__ == "__main__":
    main()
