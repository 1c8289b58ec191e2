"""A read of the accessibility tree is bounded whatever an app answers: a 20 MB accessible
name is refused by the display's own bus (one message is capped at 8 MiB), never read
into the reading process, and the other apps on the display are still read."""

from __future__ import annotations

from pathlib import Path

from viewfinder.core import get_element_source
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display
from viewfinder.xvfb.accessibility_bus import MAX_MESSAGE_BYTES

HERE = Path(__file__).parent
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi


def test_a_name_past_the_bus_limit_is_not_read() -> None:
    size = 20_000_000
    assert size > MAX_MESSAGE_BYTES
    with (
        Display(480, 320, accessibility=True) as display,
        LoggedApp([SYSTEM_PYTHON, str(HERE / "gtk_big_name.py"), str(size)], display.env()),
        LoggedApp([SYSTEM_PYTHON, str(HERE / "gtk_big_name.py"), "4"], display.env()),
        get_element_source("atspi", display=display.name) as source,
    ):
        tree = source.read()
        names = sorted(e.name for e in tree.walk() if e.role == "push button")
    assert names == ["", "NNNN"], [name[:20] for name in names]
