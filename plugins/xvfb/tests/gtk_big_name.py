"""A GTK 3 window whose one button has an accessible name of N characters
(``gtk_big_name.py N``), for the test that a read is bounded. Prints "ready" once drawn.
Run with the system Python (python3-gi)."""

import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

window = Gtk.Window(title="Big name")
button = Gtk.Button(label="Big")
button.get_accessible().set_name("N" * int(sys.argv[1]))
window.add(button)
window.connect("map-event", lambda *_a: GLib.timeout_add(300, lambda: print("ready", flush=True)))
window.show_all()
Gtk.main()
