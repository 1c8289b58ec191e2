"""A GTK 3 form for the healing tests, run with the system Python (python3-gi).

``heal_form.py LAYOUT`` draws one of four layouts of the same form (root coordinates;
the window sits at 0,0 without a window manager, every widget at a fixed place):

- ``original``: buttons "Save" at (40, 40), "Help" at (300, 40), "Cancel" at (40, 120),
  each 100x36; below them a canvas (a Gtk.DrawingArea from y=200 down, no accessible
  element of its own) painting a "Go" button picture at (40, 240), 90x34.
- ``moved``: "Save" 120 px to the right, "Help" renamed "Support", the picture 120 px
  lower.
- ``removed``: no "Save" at all.
- ``disabled``: as ``moved``, but "Save" greyed out (insensitive).
- ``lookalike``: no "Save" in the form, but a look-alike "Save" button inside a frame
  "Other" at (160, 40); the picture moved as in ``moved`` and painted twice: a twin at
  (250, 360).
- ``LAYOUT:LABEL`` (``original:Pay``, ``moved:Buy``): that layout with the "Save"
  button relabelled LABEL in its place (it prints "clicked LABEL").

Every click that lands is printed ("clicked Save", "clicked Go", "clicked Go twin",
"clicked canvas" for the canvas outside the pictures). Prints "ready" once drawn.
"""

import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

LAYOUT, _, RELABEL = (sys.argv[1] if len(sys.argv) > 1 else "original").partition(":")
CANVAS_TOP = 200
PICTURE = (90, 34)
CSS = b"""
* { outline-width: 0; transition: none; }
window, .background { background: #e8e8e8; }
button, button:hover, button:active, button:focus {
    background: #2050c0; background-image: none; color: #ffffff; border: none;
    border-radius: 0; box-shadow: none; text-shadow: none; -gtk-icon-shadow: none; }
frame > border { border: none; }
"""

style = Gtk.CssProvider()
style.load_from_data(CSS)
Gtk.StyleContext.add_provider_for_screen(
    Gdk.Screen.get_default(), style, Gtk.STYLE_PROVIDER_PRIORITY_USER
)
window = Gtk.Window(title="Healing form")
window.move(0, 0)
window.set_default_size(640, 480)
fixed = Gtk.Fixed()
window.add(fixed)


def button(label, x, y, parent=fixed):
    widget = Gtk.Button(label=label)
    widget.set_size_request(100, 36)
    widget.set_focus_on_click(False)
    widget.connect("clicked", lambda _: print(f"clicked {label}", flush=True))
    if parent is fixed:
        fixed.put(widget, x, y)
    else:
        parent.add(widget)
    return widget


if LAYOUT in ("original", "moved", "disabled"):
    save = button(RELABEL or "Save", 40 if LAYOUT == "original" else 160, 40)
    save.set_sensitive(LAYOUT != "disabled")
if LAYOUT == "lookalike":
    other = Gtk.Frame(label="Other")
    other.set_label_widget(None)  # draws like the form's own button, sits in another path
    button("Save", 0, 0, parent=other)
    fixed.put(other, 160, 40)
button("Support" if LAYOUT in ("moved", "disabled") else "Help", 300, 40)
button("Cancel", 40, 120)

# where the pictures are, in canvas coordinates
pictures = {"Go": (40, 40 if LAYOUT in ("original", "removed") else 160)}
if LAYOUT == "lookalike":
    pictures["Go twin"] = (250, 160)


def draw(_area, cr):
    for x, y in pictures.values():
        width, height = PICTURE
        cr.set_source_rgb(0.1, 0.55, 0.2)
        cr.rectangle(x, y, width, height)
        cr.fill()
        cr.set_source_rgb(1, 1, 1)  # a white play triangle and bar: a distinct picture
        cr.move_to(x + 20, y + 8)
        cr.line_to(x + 40, y + 17)
        cr.line_to(x + 20, y + 26)
        cr.close_path()
        cr.fill()
        cr.rectangle(x + 52, y + 8, 18, 18)
        cr.fill()
    return False


def pressed(_area, event):
    for name, (x, y) in pictures.items():
        if x <= event.x < x + PICTURE[0] and y <= event.y < y + PICTURE[1]:
            print(f"clicked {name}", flush=True)
            return True
    print("clicked canvas", flush=True)
    return True


canvas = Gtk.DrawingArea()
canvas.set_size_request(640, 480 - CANVAS_TOP)
canvas.add_events(Gdk.EventMask.BUTTON_PRESS_MASK)
canvas.connect("draw", draw)
canvas.connect("button-press-event", pressed)
fixed.put(canvas, 0, CANVAS_TOP)
window.connect("destroy", Gtk.main_quit)


def mapped(*_args):
    # the first frame is drawn right after the window is mapped: give it a moment
    GLib.timeout_add(300, lambda: print("ready", flush=True) and False)
    window.disconnect(handler)


handler = window.connect("map-event", mapped)
window.show_all()
Gtk.main()
