"""A small GTK 3 form whose elements can be read and clicked by ref (docs/elements.md).

    /usr/bin/python3 examples/gtk_form.py      # the system Python, with python3-gi

A "Name" field, a "Save" button and a "Cancel" button in a window at the screen's
top-left corner. Each click is printed ("clicked Save") and shown in the window's title.
"""

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

window = Gtk.Window(title="GTK form")
window.move(0, 0)
window.set_default_size(400, 200)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=20, margin=20)
field = Gtk.Entry()
field.set_text("Ada")
column.pack_start(field, False, False, 0)


def clicked(button: Gtk.Button) -> None:
    print(f"clicked {button.get_label()}", flush=True)
    window.set_title(f"GTK form: {button.get_label()} clicked")


for label in ("Save", "Cancel"):
    button = Gtk.Button(label=label)
    button.connect("clicked", clicked)
    column.pack_start(button, False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()
