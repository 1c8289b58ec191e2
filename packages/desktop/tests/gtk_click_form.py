"""A GTK 3 form that says what happens to it, for the element action tests.

Run with the system Python (Debian's python3-gi), on a display with accessibility
buses. Layout (the window sits at 0,0 without a window manager): a red text field
holding "hello", a blue "Save" button, a "Remember me" check box and a "Remove me"
button that takes itself away when clicked. Prints "ready" once drawn, then one line
per thing done to it: "clicked Save", "toggled Remember me", "removed Remove me",
"text <what the field holds>". ``--log PATH`` writes the same lines to PATH too (for
an app a server starts, whose output the test cannot read).
"""

import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

# the field red, the buttons blue, flat: a test knows their pixels by colour
FLAT = "background-image: none; color: #ffffff; border: none; border-radius: 0; box-shadow: none;"
CSS = f"entry {{ background: #ff0000; {FLAT} }} button {{ background: #0000ff; {FLAT} }}"

LOG = open(sys.argv[sys.argv.index("--log") + 1], "a") if "--log" in sys.argv else None  # noqa: SIM115


def say(line):
    print(line, flush=True)
    if LOG is not None:
        LOG.write(line + "\n")
        LOG.flush()


def flat_colours():
    style = Gtk.CssProvider()
    style.load_from_data(CSS.encode())
    screen = Gdk.Screen.get_default()
    Gtk.StyleContext.add_provider_for_screen(screen, style, Gtk.STYLE_PROVIDER_PRIORITY_USER)


flat_colours()
# without a window manager the window sits at 0,0
window = Gtk.Window(title="GTK click form", default_width=400, default_height=260)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=20, margin=20)
field = Gtk.Entry(text="hello")
field.connect("changed", lambda entry: say(f"text {entry.get_text()}"))
save = Gtk.Button(label="Save")
save.connect("clicked", lambda _button: say("clicked Save"))
check = Gtk.CheckButton(label="Remember me")
check.connect("toggled", lambda _check: say("toggled Remember me"))
remove = Gtk.Button(label="Remove me")


def removed(button):
    column.remove(button)
    say("removed Remove me")


remove.connect("clicked", removed)
for widget in (field, save, check, remove):
    column.pack_start(widget, False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)


def mapped(*_args):
    # the first frame is drawn right after the window is mapped: give it a moment
    GLib.timeout_add(200, lambda: say("ready") and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
