"""A GTK 3 window of controls for the element tests, run with the system Python.

``gtk_controls.py [--untitled]``: a greyed-out (insensitive) button "Locked", a
button "Go", a label "Just text" and a combo box of "Red", "Green", "Blue" showing
"Red", in a window titled "Controls" (no title at all with ``--untitled``). Prints
"ready" once the window is drawn, "clicked <label>" for a button clicked and
"chose <item>" when the combo box's choice changes.
"""

import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

window = Gtk.Window() if "--untitled" in sys.argv else Gtk.Window(title="Controls")
window.move(0, 0)
window.set_default_size(360, 260)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12, margin=16)


def clicked(button):
    print("clicked", button.get_label(), flush=True)


for label, sensitive in (("Locked", False), ("Go", True)):
    button = Gtk.Button(label=label)
    button.set_sensitive(sensitive)
    button.connect("clicked", clicked)
    column.pack_start(button, False, False, 0)
column.pack_start(Gtk.Label(label="Just text"), False, False, 0)
combo = Gtk.ComboBoxText()
for item in ("Red", "Green", "Blue"):
    combo.append_text(item)
combo.set_active(0)
combo.connect("changed", lambda box: print("chose", box.get_active_text(), flush=True))
column.pack_start(combo, False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)


def mapped(*_args):
    GLib.timeout_add(300, lambda: print("ready", flush=True) and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
