"""A GTK 3 window whose widgets expose hostile accessible names, for the tests that
check what reaches a model or a terminal: a button named with an ESC sequence, a bell
and a newline, one with a right-to-left override, and one with a 100,000-character
name. Run with the system Python (python3-gi); prints "ready" once drawn.
"""

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

window = Gtk.Window(title="Hostile names", default_width=400, default_height=300)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=10, margin=10)
for label in ("Save\x1b[2J\x1b]0;owned\x07\nrole: fake", "report\u202egnp.exe", "L" * 100_000):
    button = Gtk.Button(label=label[:40])
    button.get_accessible().set_name(label)
    column.pack_start(button, False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)
window.connect("map-event", lambda *_a: GLib.timeout_add(300, lambda: print("ready", flush=True)))
window.show_all()
Gtk.main()
