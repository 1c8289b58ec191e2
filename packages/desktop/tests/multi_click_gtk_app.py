"""A GTK 3 entry holding "hello world" that says what is done to it, for the multi-click
tests. Run with the system Python (Debian's python3-gi).

Prints "world X Y" (the screen point in the middle of "world") once drawn, then
"press WIDGET N" for every press of a mouse button (N: 1, or 2 and 3 where GTK counts a
double and a triple click; WIDGET: entry, or window for anywhere else), "selected
TEXT" whenever the entry's selection changes and "text TEXT" when its text does.
"""

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

COUNTS = {Gdk.EventType.BUTTON_PRESS: 1, Gdk.EventType._2BUTTON_PRESS: 2}
COUNTS[Gdk.EventType._3BUTTON_PRESS] = 3

style = Gtk.CssProvider()
style.load_from_data(b"entry { font: 30px monospace; }")
Gtk.StyleContext.add_provider_for_screen(
    Gdk.Screen.get_default(), style, Gtk.STYLE_PROVIDER_PRIORITY_USER
)
# without a window manager the window sits at 0,0
window = Gtk.Window(title="GTK multi-click", default_width=500, default_height=200)
column = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, margin=40)
entry = Gtk.Entry(text="hello world")
column.pack_start(entry, False, False, 0)
window.add(column)
window.connect("destroy", Gtk.main_quit)
selected = [None]


def pressed(widget, event, name):
    # a press the entry left unhandled comes to the window too: logged once, as the entry's
    if name == "entry" or Gtk.get_event_widget(event) is not entry:
        print(f"press {name} {COUNTS.get(event.type, 0)}", flush=True)
    return False  # the entry handles it as ever


def selection_changed(*_args):
    bounds = entry.get_selection_bounds()
    text = entry.get_chars(*bounds) if bounds else ""
    if text != selected[0]:
        selected[0] = text
        print(f"selected {text}", flush=True)


entry.connect("button-press-event", pressed, "entry")
window.connect("button-press-event", pressed, "window")
window.add_events(Gdk.EventMask.BUTTON_PRESS_MASK)
entry.connect("notify::selection-bound", selection_changed)
entry.connect("notify::cursor-position", selection_changed)
entry.connect("changed", lambda _entry: print(f"text {entry.get_text()}", flush=True))


def say_where():
    layout = entry.get_layout()
    text = entry.get_text()
    index = len(text[: text.index("world") + 2].encode())  # the middle of "world": its r
    spot = layout.index_to_pos(index)
    offset_x, offset_y = entry.get_layout_offsets()  # from the entry's corner
    left, top = entry.translate_coordinates(window, 0, 0)
    origin = window.get_window().get_origin()
    x = origin.x + left + offset_x + (spot.x + spot.width // 2) // 1024  # Pango units
    y = origin.y + top + offset_y + (spot.y + spot.height // 2) // 1024
    print(f"world {x} {y}", flush=True)
    return False


def mapped(*_args):
    GLib.timeout_add(200, say_where)  # the first frame is drawn right after the map
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
