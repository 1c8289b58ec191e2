"""A GTK 3 list in a scrolled pane, scrolled so one row shows only its top, above a
button drawn under the list: for the tests of clipped element boxes.

Run with the system Python (Debian's python3-gi), on a display with accessibility
buses. The window sits at 0,0 (no window manager). The pane covers y 0..240; its rows
are buttons "Row 1".."Row 12", 34 px high, and the list is scrolled by 4 px, so "Row 8"
spans y 234..268 and shows only 234..240; rows 9 on are wholly hidden. The "Under"
button is drawn right below the pane. Prints "ready" once scrolled and drawn, then
"clicked <name>" per click.
"""

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

ROW = 34
FLAT = "background-image: none; border: none; border-radius: 0; box-shadow: none;"
CSS = (
    f"button {{ {FLAT} min-height: 0; padding: 0; margin: 0; background: #0000ff; "
    "color: #ffffff; } list, row { padding: 0; margin: 0; min-height: 0; }"
    "#under { background: #ff0000; }"
)


def say(line):
    print(line, flush=True)


style = Gtk.CssProvider()
style.load_from_data(CSS.encode())
Gtk.StyleContext.add_provider_for_screen(
    Gdk.Screen.get_default(), style, Gtk.STYLE_PROVIDER_PRIORITY_USER
)
window = Gtk.Window(title="GTK scrolled list", default_width=300, default_height=320)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=0)
pane = Gtk.ScrolledWindow()
pane.set_size_request(300, 240)
pane.set_policy(Gtk.PolicyType.NEVER, Gtk.PolicyType.ALWAYS)
pane.set_overlay_scrolling(False)
rows = Gtk.ListBox()
rows.set_selection_mode(Gtk.SelectionMode.NONE)
for number in range(1, 13):
    button = Gtk.Button(label=f"Row {number}")
    button.set_size_request(-1, ROW)
    button.connect("clicked", lambda _b, name=f"Row {number}": say(f"clicked {name}"))
    rows.add(button)
pane.add(rows)
under = Gtk.Button(label="Under", name="under")
under.set_size_request(300, 60)
under.connect("clicked", lambda _b: say("clicked Under"))
column.pack_start(pane, False, False, 0)
column.pack_start(under, False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)


def scrolled():
    pane.get_vadjustment().set_value(4)
    GLib.timeout_add(300, lambda: say("ready") and False)
    return False


def mapped(*_args):
    GLib.timeout_add(200, scrolled)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
