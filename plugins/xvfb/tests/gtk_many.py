"""A GTK 3 window of many elements, run with the system Python (python3-gi).

``gtk_many.py ROWS``: a list of ROWS labels in a scrolled window at the top (a few
rows show, the rest are scrolled away and not showing), and under it, nested four
boxes deep, eleven buttons "Button 1" .. "Button 11" that all show. A tree read
breadth first meets every row before any button. Prints "ready" once the window is
drawn and "clicked <label>" for each button clicked.
"""

import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1180
window = Gtk.Window(title="Many")
window.move(0, 0)
window.set_default_size(900, 400)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
scrolled = Gtk.ScrolledWindow()
scrolled.set_size_request(-1, 200)
listing = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
for index in range(rows):
    listing.pack_start(Gtk.Label(label=f"Row {index}"), False, False, 0)
scrolled.add(listing)
column.pack_start(scrolled, True, True, 0)
holder = column
for _ in range(4):  # deep, so a breadth-first read reaches the buttons last
    inner = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL)
    holder.pack_start(inner, False, False, 0)
    holder = inner


def clicked(button):
    print("clicked", button.get_label(), flush=True)


for index in range(1, 12):
    button = Gtk.Button(label=f"Button {index}")
    button.connect("clicked", clicked)
    holder.pack_start(button, False, False, 2)
window.add(column)
window.connect("destroy", Gtk.main_quit)


def mapped(*_args):
    GLib.timeout_add(300, lambda: print("ready", flush=True) and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
