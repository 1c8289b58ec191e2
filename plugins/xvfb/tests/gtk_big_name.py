"""A GTK 3 window whose one button has an accessible name of N characters
(``gtk_big_name.py N``), for the test that a read is bounded. Prints "ready" once drawn."""

import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk

w = Gtk.Window(title="Big name")
b = Gtk.Button(label="Big")
b.get_accessible().set_name("N" * int(sys.argv[1]))
w.add(b)
w.connect("map-event", lambda *a: GLib.timeout_add(300, lambda: print("ready", flush=True)))
w.show_all()
Gtk.main()
