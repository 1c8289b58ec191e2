"""AT-SPI trees complete, or saying what they left out, on real GTK 3 apps.

Each test acts through the ComputerTool by ref and asserts from the app's own log
that the named element, and nothing else, was acted on: a greyed-out button is
refused, a combo box's open menu is listed once and its item is chosen, an untitled
window is its app's, a read cut at 150 of 1,200 elements keeps every button on the
screen.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.core import Element, ElementTree, get_element_source, snapshot_text
from viewfinder.desktop import ComputerTool
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi


def named(tree: ElementTree, role: str, name: str) -> list[Element]:
    return [e for e in tree.walk() if e.role == role and e.name == name]


@pytest.fixture(scope="module")
def controls() -> Iterator[tuple[Display, LoggedApp]]:
    with (
        Display(480, 320, accessibility=True) as display,
        LoggedApp([SYSTEM_PYTHON, str(HERE / "gtk_controls.py")], display.env()) as app,
    ):
        yield display, app


def test_a_greyed_out_button_is_disabled_and_a_click_on_it_is_refused(
    controls: tuple[Display, LoggedApp],
) -> None:
    display, app = controls
    with ComputerTool(display, elements=True) as tool:
        tree = tool.read_elements()
        (locked,) = named(tree, "push button", "Locked")
        (go,) = named(tree, "push button", "Go")
        (label,) = named(tree, "label", "Just text")
        assert "disabled" in locked.states
        assert "disabled" not in go.states and "disabled" not in label.states
        assert f'{locked.ref} push button "Locked" [disabled]' in snapshot_text(tree)

        refused = tool({"action": "left_click", "element": locked.ref})
        assert refused.is_error and refused.error_type == "ElementDisabledError"
        assert "is disabled" in (refused.error or "")
        done = tool({"action": "left_click", "element": go.ref})
        assert not done.is_error, done.error
        assert app.wait_for("clicked Go") == ["clicked Go"]  # never "clicked Locked"
        time.sleep(0.3)
        assert app.said() == []


def test_an_open_combo_box_lists_its_menu_once_and_its_item_is_chosen_by_ref(
    controls: tuple[Display, LoggedApp],
) -> None:
    display, app = controls
    with ComputerTool(display, elements=True) as tool:
        (combo,) = named(tool.read_elements(), "combo box", "Red")
        assert not tool({"action": "left_click", "element": combo.ref}).is_error
        deadline = time.monotonic() + 10
        while True:  # until the popup shows its items
            tree = tool.read_elements()
            green = [e for e in named(tree, "menu item", "Green") if e.visible]
            if green or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(named(tree, "menu item", "Green")) == 1, tree
        assert len([e for e in tree.walk() if e.role == "menu"]) == 1
        assert tree.reason == ""
        done = tool({"action": "left_click", "element": green[0].ref})
        assert not done.is_error, done.error
        assert app.wait_for("chose Green") == ["chose Green"]
        time.sleep(0.3)
        assert app.said() == []


def test_an_untitled_window_is_matched_to_its_app_by_process() -> None:
    with (
        Display(480, 320, accessibility=True) as display,
        LoggedApp(
            [SYSTEM_PYTHON, str(HERE / "gtk_controls.py"), "--untitled"], display.env()
        ) as app,
        ComputerTool(display, elements=True) as tool,
    ):
        tree = tool.read_elements()
        assert tree.reason == ""
        (go,) = named(tree, "push button", "Go")
        assert tree.application(go).pid == app.process.pid
        done = tool({"action": "left_click", "element": go.ref})
        assert not done.is_error, done.error
        assert app.wait_for("clicked Go") == ["clicked Go"]


def test_a_cut_read_keeps_every_visible_button_and_says_how_many_it_left_out() -> None:
    with (
        Display(1024, 600, accessibility=True) as display,
        LoggedApp([SYSTEM_PYTHON, str(HERE / "gtk_many.py"), "1180"], display.env()) as app,
        get_element_source("atspi", display=display.name, max_elements=150) as source,
        ComputerTool(display, elements=True, element_source=source) as tool,
    ):
        tree = tool.read_elements()
        assert tree.count() == 151  # 150 elements and the application
        buttons = [e for e in tree.walk() if e.role == "push button" and e.visible]
        assert sorted(e.name for e in buttons) == sorted(f"Button {n}" for n in range(1, 12))
        shown_rows = [e for e in tree.walk() if e.name.startswith("Row ") and e.visible]
        assert shown_rows  # the rows on the screen come before those scrolled away
        # the window holds 1,202 elements (1,180 rows): 1,052 are left out
        assert "1052 elements left out (max_elements=150" in tree.reason
        assert "left out" in snapshot_text(tree).splitlines()[-1]

        (seventh,) = named(tree, "push button", "Button 7")
        done = tool({"action": "left_click", "element": seventh.ref})
        assert not done.is_error, done.error
        assert app.wait_for("clicked Button 7") == ["clicked Button 7"]
        time.sleep(0.3)
        assert app.said() == []
