"""A GTK 3 form for tasks: an Email entry and a Submit button at fixed places.

    /usr/bin/python3 gtk_signup.py --out FOLDER/signup.txt --log FOLDER/signup.log

Submit writes the email to ``--out``; every click is logged. Run with the system
Python (python3-gi).
"""

import argparse

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--out", required=True)
parser.add_argument("--log", required=True)
args = parser.parse_args()
log = open(args.log, "a", buffering=1, encoding="utf-8")  # noqa: SIM115

window = Gtk.Window(title="GTK sign-up")
window.move(0, 0)
window.set_default_size(360, 200)
fixed = Gtk.Fixed()
entry = Gtk.Entry()
entry.set_size_request(240, 34)
fixed.put(entry, 20, 20)
button = Gtk.Button(label="Submit")
button.set_size_request(100, 40)
fixed.put(button, 20, 80)


def pressed(widget: Gtk.Widget, _event: object, name: str) -> bool:
    log.write(f"click {name}\n")
    return False


def submit(_button: Gtk.Button) -> None:
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(entry.get_text())
    window.set_title(f"GTK sign-up: {entry.get_text()}")


entry.connect("button-press-event", pressed, "email")
button.connect("button-press-event", pressed, "submit")
button.connect("clicked", submit)
window.add(fixed)
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()
