"""A direct libatspi read of an accessibility bus, for benchmarks/atspi_read.py.

Run with the system Python (PyGObject and gir1.2-atspi-2.0), with the display's
``display.env()``: one line on stdin, ``read``, walks every application's tree asking
each element what the ``atspi`` source asks (role name, name, states, children,
interfaces, extents on the screen, text or value) and prints ``<elements> <ms>``.
libatspi's own cache is cleared before each read, so every read asks the apps.
"""

import os
import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

CLEAR = os.environ.get("LIBATSPI_CACHE") != "keep"


def describe(accessible, count):
    accessible.get_role_name()
    accessible.get_name()
    accessible.get_state_set()
    interfaces = accessible.get_interfaces()
    if count[1] > 0:  # an application has no place on the screen
        accessible.get_extents(Atspi.CoordType.SCREEN)
    if "Text" in interfaces:
        accessible.get_text(0, -1)
    elif "Value" in interfaces:
        accessible.get_current_value()


def walk(accessible, depth, count):
    count[0] += 1
    count[1] = depth
    describe(accessible, count)
    for index in range(accessible.get_child_count()):
        child = accessible.get_child_at_index(index)
        if child is not None:
            walk(child, depth + 1, count)


def read():
    desktop = Atspi.get_desktop(0)
    count = [0, 0]
    for index in range(desktop.get_child_count()):
        application = desktop.get_child_at_index(index)
        if CLEAR:
            application.clear_cache()
        walk(application, 0, count)
    return count[0]


for line in sys.stdin:
    if line.strip() != "read":
        break
    started = time.perf_counter()
    elements = read()
    print(elements, (time.perf_counter() - started) * 1000, flush=True)
