"""A GTK 3 window with one button labelled 'Start' that relabels itself 'Stop' when
clicked (and back), printing "clicked Start" / "clicked Stop" with the label it had.

Run with the system Python (python3-gi). The window sits at 0,0 (no window manager),
300x120, the button fills it. Prints "ready" once the window is drawn.
"""

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

window = Gtk.Window(title="Start and stop")
window.move(0, 0)
window.set_default_size(300, 120)
button = Gtk.Button(label="Start")
window.add(button)
window.connect("destroy", Gtk.main_quit)


def clicked(widget):
    label = widget.get_label()
    print(f"clicked {label}", flush=True)
    widget.set_label("Stop" if label == "Start" else "Start")


button.connect("clicked", clicked)


def mapped(*_args):
    GLib.timeout_add(200, lambda: print("ready", flush=True) and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
