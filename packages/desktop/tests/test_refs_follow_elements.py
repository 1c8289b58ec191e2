"""Refs bound to the element itself (its AT-SPI bus name and object path), not to its
place among its siblings: on a real GTK list (gtk_message_list.py) a row inserted
above a ref'd button leaves the ref on that button, and a click by it deletes the
message it was read for, never its new neighbour.
"""

from __future__ import annotations

import time
from pathlib import Path

from viewfinder.core import Element, ElementTree
from viewfinder.desktop import ComputerTool
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi


def delete_button(tree: ElementTree, message: str) -> Element:
    """The "Delete" button in the row of ``message``."""
    for element in tree.walk():
        labels = [child.name for child in element.children if child.role == "label"]
        buttons = [c for c in element.children if c.role == "push button" and c.name == "Delete"]
        if labels == [message] and len(buttons) == 1:
            return buttons[0]
    raise AssertionError(f"no row {message!r} in {[e.name for e in tree.walk()]}")


def read_until(tool: ComputerTool, message: str) -> ElementTree:
    deadline = time.monotonic() + 20
    while True:
        tree = tool.read_elements()
        if any(e.name == message for e in tree.walk()) or time.monotonic() > deadline:
            return tree
        time.sleep(0.2)


def test_a_row_inserted_above_leaves_the_ref_on_its_element() -> None:
    with (
        Display(480, 360, accessibility=True) as display,
        LoggedApp([SYSTEM_PYTHON, str(HERE / "gtk_message_list.py")], display.env()) as app,
        ComputerTool(display, elements=True) as tool,
    ):
        before = read_until(tool, "Message 3")
        third = delete_button(before, "Message 3")
        second = delete_button(before, "Message 2")
        (new,) = [e for e in before.walk() if e.name == "New message"]
        assert not tool({"action": "left_click", "element": new.ref}).is_error
        app.wait_for("inserted Message 4")
        after = read_until(tool, "Message 4")
        # every row moved down one place; each button keeps its ref
        assert delete_button(after, "Message 3").ref == third.ref
        assert delete_button(after, "Message 2").ref == second.ref
        assert delete_button(after, "Message 4").ref not in {third.ref, second.ref}

        done = tool({"action": "left_click", "element": third.ref})
        assert not done.is_error, done.error
        assert app.wait_for("deleted Message 3") == ["deleted Message 3"]
        # its row is gone, and so is the element the ref named
        gone = tool({"action": "left_click", "element": third.ref})
        assert gone.is_error and gone.error_type == "ElementGoneError", gone.error
        assert app.said() == []
