"""GTK 3 windows of one title, one over the other, for the where-we-act tests.

Run with the system Python (python3-gi) on a display with accessibility buses; no
window manager, so each window sits where it is moved. Every window is titled "Twin",
300x200, with one 120x40 button at (20, 20) inside it:

- ``twin_windows.py discard``: the "Discard" window at (0, 0);
- ``twin_windows.py keep``: the "Keep" window at (20, 20), its button exactly over
  Discard's when both show;
- ``twin_windows.py both``: both windows from this one process, Keep mapped last (on top).

Prints "ready" once every window is drawn, then "clicked LABEL" for each click.
"""

import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

PLACES = {"Discard": (0, 0), "Keep": (20, 20)}
WHICH = {"discard": ["Discard"], "keep": ["Keep"], "both": ["Discard", "Keep"]}[sys.argv[1]]
pending = set(WHICH)


def shown(label):
    pending.discard(label)
    if not pending:  # the first frames are drawn right after mapping: give them a moment
        GLib.timeout_add(300, lambda: print("ready", flush=True) and False)


for label in WHICH:
    window = Gtk.Window(title="Twin", default_width=300, default_height=200)
    window.move(*PLACES[label])
    fixed = Gtk.Fixed()
    button = Gtk.Button(label=label)
    button.set_size_request(120, 40)
    button.connect("clicked", lambda _b, said=label: print(f"clicked {said}", flush=True))
    fixed.put(button, 20, 20)
    window.add(fixed)
    window.connect("destroy", Gtk.main_quit)
    window.connect("map-event", lambda *_a, said=label: shown(said))
    window.show_all()
    # mapped one after the other: the X server stacks the later one on top
    while Gtk.events_pending():
        Gtk.main_iteration()
Gtk.main()
