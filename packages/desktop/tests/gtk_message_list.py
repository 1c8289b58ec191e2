"""A GTK 3 list of messages, each row a label and a "Delete" button, for the ref tests.

Run with the system Python (python3-gi) on a display with accessibility buses. Rows
"Message 1" to "Message 3" from the top; the "New message" button below the list
inserts "Message N" at the top. Prints "ready" once drawn, then "deleted Message K"
for each row deleted and "inserted Message N" for each row inserted.
"""

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

window = Gtk.Window(title="Messages", default_width=360, default_height=320)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8, margin=10)
rows = Gtk.ListBox()
count = 0


def add_row(top):
    global count
    count += 1
    label = f"Message {count}"
    row = Gtk.Box(spacing=10)
    row.pack_start(Gtk.Label(label=label), True, True, 0)
    delete = Gtk.Button(label="Delete")

    def deleted(_button, holder=row, said=label):
        rows.remove(holder.get_parent())
        print(f"deleted {said}", flush=True)

    delete.connect("clicked", deleted)
    row.pack_start(delete, False, False, 0)
    rows.insert(row, 0 if top else -1)
    row.show_all()
    return label


for _ in range(3):
    add_row(top=False)
column.pack_start(rows, False, False, 0)
new = Gtk.Button(label="New message")
new.connect("clicked", lambda _b: print(f"inserted {add_row(top=True)}", flush=True))
column.pack_start(new, False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)


def mapped(*_args):
    GLib.timeout_add(300, lambda: print("ready", flush=True) and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
