"""A GTK 3 window whose one button's accessible name is 600 characters long.

Run with the system Python (python3-gi). The window sits at 0,0 (no window manager),
400x200, the button fills it. Prints "ready" once the window is drawn.
"""

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

window = Gtk.Window(title="Long names")
window.move(0, 0)
window.set_default_size(400, 200)
button = Gtk.Button(label="Go")
button.get_accessible().set_name("x" * 600)
window.add(button)
window.connect("destroy", Gtk.main_quit)


def mapped(*_args):
    GLib.timeout_add(200, lambda: print("ready", flush=True) and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
