"""A GTK 3 window of blue buttons in a column, each saying when it is clicked.

Run with the system Python (Debian's python3-gi), on a display with accessibility
buses. Eight flat blue buttons, 50 px high, 30 px apart, down a white window at 0,0
(no window manager), so a box placed by the wrong factor on one axis lands on another
button or between two. Prints "ready" once drawn, then "clicked <name>" per click.
``--log PATH`` writes the same lines to PATH too (for an app a server starts).
"""

import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

NAMES = ("Open", "Draft", "Reply", "Forward", "Archive", "Label", "Send", "Delete")
FLAT = "background-image: none; color: #ffffff; border: none; border-radius: 0; box-shadow: none;"
CSS = f"window {{ background: #ffffff; }} button {{ background: #0000ff; {FLAT} }}"

LOG = open(sys.argv[sys.argv.index("--log") + 1], "a") if "--log" in sys.argv else None  # noqa: SIM115


def say(line):
    print(line, flush=True)
    if LOG is not None:
        LOG.write(line + "\n")
        LOG.flush()


style = Gtk.CssProvider()
style.load_from_data(CSS.encode())
Gtk.StyleContext.add_provider_for_screen(
    Gdk.Screen.get_default(), style, Gtk.STYLE_PROVIDER_PRIORITY_USER
)
window = Gtk.Window(title="GTK button column", default_width=400, default_height=720)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=30, margin=40)
for name in NAMES:
    button = Gtk.Button(label=name)
    button.set_size_request(240, 50)
    button.connect("clicked", lambda _button, name=name: say(f"clicked {name}"))
    column.pack_start(button, False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)


def mapped(*_args):
    GLib.timeout_add(200, lambda: say("ready") and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
