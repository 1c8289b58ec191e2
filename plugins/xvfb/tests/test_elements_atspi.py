"""The atspi element source on a real Xvfb with real apps: a GTK 3 form and a Tk form.

One display with its accessibility buses and the GTK form is shared by the module.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.core import (
    DisplayGoneError,
    Element,
    ElementSourceError,
    ElementTree,
    elements,
    get_element_source,
)
from viewfinder.core.testing import wait_until
from viewfinder.xvfb import Display
from viewfinder.xvfb.atspi import AtspiTimeoutError

HERE = Path(__file__).parent
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
RED, BLUE = (255, 0, 0), (0, 0, 255)


def start_app(display: Display, program: list[str]) -> subprocess.Popen[str]:
    app = subprocess.Popen(
        program, env=display.env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert app.stdout is not None
    line = app.stdout.readline()  # blocks until the window is drawn (or the app died)
    assert line.strip() == "ready", f"the app did not start: {line!r}, exit {app.poll()}"
    return app


def stop_app(app: subprocess.Popen[str]) -> None:
    app.kill()
    app.wait(timeout=10)


@pytest.fixture(scope="module")
def gtk_display() -> Iterator[tuple[Display, subprocess.Popen[str]]]:
    with Display(640, 480, accessibility=True) as display:
        app = start_app(display, [SYSTEM_PYTHON, str(HERE / "gtk_form.py")])
        try:
            yield display, app
        finally:
            stop_app(app)


def only(tree: ElementTree, role: str, name: str | None = None) -> Element:
    found = [e for e in tree.walk() if e.role == role and (name is None or e.name == name)]
    assert len(found) == 1, f"{len(found)} elements {role} {name!r} in {tree}"
    return found[0]


def test_the_tree_names_the_buttons_and_fields_with_boxes_on_their_pixels(
    gtk_display: tuple[Display, subprocess.Popen[str]],
) -> None:
    display, _ = gtk_display
    tree = elements("atspi", display=display.name)
    assert tree.reason == "" and tree.coordinates == "screen"
    window = only(tree, "frame", "GTK form")
    save = only(tree, "push button", "Save")
    field = only(tree, "text")
    check = only(tree, "check box", "Remember me")
    assert field.value == "hello"
    assert "editable" in field.states and "showing" in save.states
    assert save.parent is not None and window.box is not None
    shot = display.backend().capture()
    for element, colour in ((save, BLUE), (field, RED)):
        box = element.box
        assert box is not None
        # the box's inside is the widget's colour, and the widget ends where the box does
        assert shot.pixel(box.center.x, box.center.y) == colour
        assert shot.pixel(box.x + 2, box.y + 2) == colour
        assert shot.pixel(box.right - 3, box.bottom - 3) == colour
        assert shot.pixel(box.center.x, box.bottom + 4) != colour
        assert shot.pixel(box.center.x, max(box.y - 4, 0)) != colour
    assert check.box is not None and check.box.y > save.box.bottom  # type: ignore[union-attr]


def test_refs_are_stable_across_reads_of_a_session(
    gtk_display: tuple[Display, subprocess.Popen[str]],
) -> None:
    display, _ = gtk_display
    with get_element_source(display=display.name) as source:
        first = source.read()
        second = source.read()
    assert [(e.ref, e.role, e.name) for e in first.walk()] == [
        (e.ref, e.role, e.name) for e in second.walk()
    ]
    save = only(second, "push button", "Save")
    assert second.find(save.ref) == save


def test_an_app_that_stops_answering_is_a_timeout_and_the_next_read_works(
    gtk_display: tuple[Display, subprocess.Popen[str]],
) -> None:
    display, app = gtk_display
    os.kill(app.pid, signal.SIGSTOP)
    try:
        with get_element_source("atspi", display=display.name, timeout=1.0) as source:
            started = time.monotonic()
            with pytest.raises(AtspiTimeoutError, match="within 1s"):
                source.read()
            assert time.monotonic() - started < 10  # bounded, not hung
    finally:
        os.kill(app.pid, signal.SIGCONT)
    assert only(elements("atspi", display=display.name), "push button", "Save")


def test_a_tk_app_gives_an_empty_tree_with_the_reason() -> None:
    with Display(320, 200, accessibility=True) as display:
        app = start_app(display, [sys.executable, str(HERE / "tk_form.py")])
        try:
            tree = elements("atspi", display=display.name)
        finally:
            stop_app(app)
    assert tree.roots == ()
    assert "'Tk form' (Tk) expose no accessibility tree" in tree.reason
    assert "Tk implements no AT-SPI" in tree.reason


def test_a_display_without_buses_gives_an_empty_tree_saying_how_to_start_them() -> None:
    with Display(320, 200) as display:
        assert display.accessibility_bus is None
        assert "DBUS_SESSION_BUS_ADDRESS" not in display.env({})
        tree = elements("atspi", display=display.name)
    assert tree.roots == () and "has no accessibility bus" in tree.reason


def test_a_session_cannot_point_its_display_at_another_displays_bus(
    gtk_display: tuple[Display, subprocess.Popen[str]],
) -> None:
    other, _ = gtk_display
    bus = other.accessibility_bus
    assert bus is not None and bus.address is not None
    with Display(320, 200) as display:
        # what any client of the display can do: name the other display's bus
        subprocess.run(
            ["xprop", "-root", "-f", "AT_SPI_BUS", "8s", "-set", "AT_SPI_BUS", bus.address],
            env=display.env(),
            check=True,
        )
        tree = elements("atspi", display=display.name)
        # and by a spelling of the address that a check of the raw string let through:
        # %-escaped "../", which D-Bus unescapes
        folder = Path(bus.address.removeprefix("unix:path=").split(",")[0]).parent
        assert display._fbdir is not None
        ours = display._fbdir
        sneaky = "".join(
            f"%{ord(c):02X}" if c in "./" else c for c in os.path.relpath(folder, ours)
        )
        address = f"unix:path={ours}/{sneaky}%2Faccessibility-bus"
        subprocess.run(
            ["xprop", "-root", "-f", "AT_SPI_BUS", "8s", "-set", "AT_SPI_BUS", address],
            env=display.env(),
            check=True,
        )
        escaped = elements("atspi", display=display.name)
    for read in (tree, escaped):
        assert read.roots == () and "not one of the display's own buses" in read.reason
        assert "GTK form" not in read.model_dump_json()
    assert any(e.name == "Save" for e in elements("atspi", display=other.name).walk())


def test_a_display_with_buses_reads_its_own_whatever_its_root_window_says(
    gtk_display: tuple[Display, subprocess.Popen[str]],
) -> None:
    other, _ = gtk_display
    assert other.accessibility_bus is not None and other.accessibility_bus.address
    with Display(320, 200, accessibility=True) as display:
        assert elements("atspi", display=display.name).reason == ""  # its own, unchanged
        subprocess.run(
            [
                "xprop",
                "-root",
                "-f",
                "AT_SPI_BUS",
                "8s",
                "-set",
                "AT_SPI_BUS",
                other.accessibility_bus.address,
            ],
            env=display.env(),
            check=True,
        )
        tree = elements("atspi", display=display.name)
    assert "GTK form" not in tree.model_dump_json()  # the other display's app
    assert "was changed to" in tree.reason and "the display's own bus was read" in tree.reason


def test_a_display_that_is_not_there_is_a_typed_error() -> None:
    with pytest.raises(DisplayGoneError, match="not running"):
        elements("atspi", display=":3999")
    with pytest.raises(DisplayGoneError, match="Bad display name"):
        elements("atspi", display="garbage")


@pytest.mark.parametrize(
    ("options", "message"),
    [({"timeout": 0}, "timeout must be more than 0"), ({"max_elements": 0}, "max_elements")],
)
def test_bad_limits_are_typed_errors(options: dict[str, float], message: str) -> None:
    with pytest.raises(ElementSourceError, match=message):
        elements("atspi", display=":3999", **options)


def group_members(groups: set[int]) -> set[int]:
    """Live (not zombie) processes in the process groups ``groups``."""
    members = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) in groups:
            members.add(int(entry.name))
    return members


def test_the_buses_go_with_the_display_and_leave_nothing() -> None:
    display = Display(320, 200, accessibility=True).start()
    bus = display.accessibility_bus
    assert bus is not None
    groups = set(bus.pids)
    env = display.env({"NO_AT_BRIDGE": "1"})
    assert env["AT_SPI_BUS_ADDRESS"] == bus.address and "NO_AT_BRIDGE" not in env
    # the registry starts when a client first asks for it: in the bus's group
    elements("atspi", display=display.name)
    assert len(group_members(groups)) >= 3  # two daemons and the registry
    display.stop()
    assert group_members(groups) == set()
    assert not bus.directory.exists()  # the sockets went with the display's directory


KILLED_OWNER = """
import sys, time
from viewfinder.core import elements
from viewfinder.xvfb import Display
display = Display(320, 200, accessibility=True).start()
elements("atspi", display=display.name)
print(*display.accessibility_bus.pids, display.pid, flush=True)
time.sleep(60)
"""


def test_a_killed_owner_leaves_no_bus_behind() -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", KILLED_OWNER], stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    *daemons, xvfb = (int(pid) for pid in owner.stdout.readline().split())
    assert len(daemons) == 2 and len(group_members(set(daemons))) >= 3
    owner.kill()
    owner.wait(timeout=10)
    wait_until(lambda: not group_members(set(daemons)), "the buses and the registry to end")
    os.kill(xvfb, signal.SIGKILL)  # Xvfb itself is left to its own reaper: not this test's


# Run as root (as the suite is), it becomes nobody, as a code env session's user would.
OTHER_USER_CONNECTS = """
import os, socket, sys
os.setgid(65534); os.setuid(65534)
for path in sys.argv[1:]:
    try:
        socket.socket(socket.AF_UNIX).connect(path)
        print("connected", path)
    except OSError as exc:
        print(type(exc).__name__, path)
"""


def test_another_user_cannot_reach_the_buses(
    gtk_display: tuple[Display, subprocess.Popen[str]],
) -> None:
    display, _ = gtk_display
    bus = display.accessibility_bus
    assert bus is not None and bus.address is not None and bus.session_address is not None
    paths = [
        address.split("unix:path=", 1)[1].split(",", 1)[0]
        for address in (bus.address, bus.session_address)
    ]
    result = subprocess.run(
        [sys.executable, "-c", OTHER_USER_CONNECTS, *paths],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.stdout.split("\n")[:2] == [f"PermissionError {path}" for path in paths]
