"""Small Tk apps that draw an action's effect the ways real apps do (settle tests, benchmark).

    python examples/settle_apps.py MODE [--state FILE] [--delay MS]

Each mode shows a window at the screen's top-left corner with a **Go** button and a
large **panel** whose colour is the effect to wait for (it takes the next colour of
:data:`PANEL_COLOURS` on each effect):

- ``instant``: a click on Go recolours the panel at once.
- ``repaint``: nothing is drawn at once; the panel is recoloured ``--delay`` ms (150)
  after the click.
- ``two-step``: Tk's button feedback at once (the pressed relief, then the raised one),
  and the panel ``--delay`` ms (250) later: the app's real work.
- ``caret``: a text box with the keyboard focus and a caret blinking every 100 ms
  beside the panel; the panel is recoloured ``--delay`` ms (150) after the click.
- ``spinner``: an arc turning every 30 ms, for ever; the panel is recoloured at once.
- ``text``: a text box with the keyboard focus (no caret blink); typed text is the
  effect, ``chars`` in the state counts what the app has read, Escape empties it.

With ``--state FILE`` the app writes its state as JSON to FILE (atomically): ``effects``
(how many times the panel was recoloured), ``chars``, and ``layout`` (each widget's
``[x, y, width, height]`` on the screen). It prints ``ready`` once it is drawn and has
the keyboard focus.
"""

from __future__ import annotations

import argparse
import tkinter as tk
from pathlib import Path
from typing import Any

from desktop_form import write_state

MODES = ("instant", "repaint", "two-step", "caret", "spinner", "text")
#: The panel's colours, one per effect, in turn (it starts white).
PANEL_COLOURS = ("#d03030", "#30a040", "#3050d0")
PANEL_START = "#ffffff"
DEFAULT_DELAY_MS = {"repaint": 150, "two-step": 250, "caret": 150}
SPIN_MS = 30
BLINK_MS = 100
BACKGROUND = "#ececec"
FONT = ("DejaVu Sans Mono", 11)


def panel_colour(effects: int) -> str:
    """The panel's colour after ``effects`` effects."""
    return PANEL_START if effects == 0 else PANEL_COLOURS[(effects - 1) % len(PANEL_COLOURS)]


class SettleApp:
    """The window of one mode; see the module docstring."""

    def __init__(self, mode: str, state_path: Path | None, delay_ms: int | None) -> None:
        self.mode = mode
        self.state_path = state_path
        self.delay_ms = DEFAULT_DELAY_MS.get(mode, 0) if delay_ms is None else delay_ms
        self.state: dict[str, Any] = {"mode": mode, "effects": 0, "chars": 0, "layout": {}}
        self.root = tk.Tk()
        self.root.title(f"settle: {mode}")
        self.root.geometry("900x640+0+0")
        self.root.configure(bg=BACKGROUND)
        self.button = tk.Button(self.root, text="Go", font=FONT, command=self._go)
        self.button.place(x=20, y=20, width=100, height=36)
        self.panel = tk.Frame(self.root, bg=PANEL_START)
        self.panel.place(x=20, y=80, width=480, height=360)
        self.text: tk.Text | None = None
        if mode in ("caret", "text"):
            self.text = tk.Text(self.root, font=FONT, wrap="char", insertwidth=3)
            # A fast blink in the caret app; no blink in the text app (its frames compare).
            self.text.configure(
                insertontime=BLINK_MS, insertofftime=BLINK_MS if mode == "caret" else 0
            )
            self.text.place(x=520, y=80, width=360, height=540)
            self.text.bind("<Key>", self._key, add=True)
            self.text.bind("<Escape>", self._clear)
        self.spinner: tk.Canvas | None = None
        if mode == "spinner":
            self.spinner = tk.Canvas(self.root, width=48, height=48, bg=BACKGROUND)
            self.spinner.place(x=140, y=14)
            self.arc = self.spinner.create_arc(6, 6, 44, 44, start=0, extent=90, fill="#202020")
            self.angle = 0
        self._pending_count = False

    # -- effects -----------------------------------------------------------------------

    def _go(self) -> None:
        if self.delay_ms:
            self.root.after(self.delay_ms, self._effect)
        else:
            self._effect()

    def _effect(self) -> None:
        self.state["effects"] += 1
        self.panel.configure(bg=panel_colour(self.state["effects"]))
        self.root.update_idletasks()  # drawn before the state says so
        self._save()

    def _key(self, event: tk.Event) -> None:
        if event.char and event.char.isprintable():
            self.state["chars"] += 1
            if not self._pending_count:  # one write for a burst of keys, once it is drawn
                self._pending_count = True
                self.root.after_idle(self._count)

    def _clear(self, _event: tk.Event) -> None:
        assert self.text is not None
        self.text.delete("1.0", "end")
        self.state["chars"] = 0
        self.root.update_idletasks()
        self._save()

    def _count(self) -> None:
        self._pending_count = False
        self._save()

    def _spin(self) -> None:
        assert self.spinner is not None
        self.angle = (self.angle + 30) % 360
        self.spinner.itemconfigure(self.arc, start=self.angle)
        self.root.after(SPIN_MS, self._spin)

    # -- state -------------------------------------------------------------------------

    def _save(self) -> None:
        if self.state_path is not None:
            write_state(self.state_path, self.state)

    def _ready(self) -> None:
        self.root.focus_force()
        if self.text is not None:
            self.text.focus_set()
        self.root.update_idletasks()
        widgets = {"button": self.button, "panel": self.panel}
        if self.text is not None:
            widgets["text"] = self.text
        if self.spinner is not None:
            widgets["spinner"] = self.spinner
            self._spin()
        self.state["layout"] = {
            name: [w.winfo_rootx(), w.winfo_rooty(), w.winfo_width(), w.winfo_height()]
            for name, w in widgets.items()
        }
        self._save()
        print("ready", flush=True)

    def run(self) -> None:
        self.root.after(100, self._ready)
        self.root.mainloop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--state", type=Path, help="write the app's state as JSON here")
    parser.add_argument("--delay", type=int, help="ms from the click to the panel's change")
    args = parser.parse_args()
    SettleApp(args.mode, args.state, args.delay).run()


if __name__ == "__main__":
    main()
