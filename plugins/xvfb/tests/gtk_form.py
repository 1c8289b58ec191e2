"""A GTK 3 form for the element tests, run with the system Python (python3-gi).

Layout (root coordinates; the window sits at 0,0 without a window manager): a red
text field holding "hello" above a blue "Save" button and a "Remember me" check box.
Prints "ready" once the window is drawn.
"""

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

CSS = b"""
entry { background: #ff0000; background-image: none; color: #ffffff; border: none;
        border-radius: 0; box-shadow: none; }
button { background: #0000ff; background-image: none; color: #ffffff; border: none;
         border-radius: 0; box-shadow: none; }
"""

style = Gtk.CssProvider()
style.load_from_data(CSS)
Gtk.StyleContext.add_provider_for_screen(
    Gdk.Screen.get_default(), style, Gtk.STYLE_PROVIDER_PRIORITY_USER
)
window = Gtk.Window(title="GTK form")
window.move(0, 0)
window.set_default_size(400, 200)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=20, margin=20)
field = Gtk.Entry()
field.set_text("hello")
column.pack_start(field, False, False, 0)
column.pack_start(Gtk.Button(label="Save"), False, False, 0)
column.pack_start(Gtk.CheckButton(label="Remember me"), False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)


def mapped(*_args):
    # the first frame is drawn right after the window is mapped: give it a moment
    GLib.timeout_add(200, lambda: print("ready", flush=True) and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
