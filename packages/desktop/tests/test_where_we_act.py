"""The one check before an element action: the window in front at the element's middle
is its own (by X window ids and owning processes, never by title), on a real Xvfb with
accessibility buses and real GTK apps (twin_windows.py) that log every click.

Every window is titled "Twin": a check that compared titles would take the window in
front for the element's own and click what is there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.core import ElementTree
from viewfinder.desktop import ComputerTool
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
APP = str(HERE / "twin_windows.py")


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(640, 480, accessibility=True) as display:
        yield display


def buttons(tool: ComputerTool, *names: str) -> dict[str, str]:
    """The ref of each named push button, once the tree holds them all (bounded)."""
    deadline = time.monotonic() + 20
    tree = ElementTree(source="atspi")
    while time.monotonic() < deadline:
        tree = tool.read_elements()
        found = {e.name: e.ref for e in tree.walk() if e.role == "push button"}
        if all(name in found for name in names):
            return {name: found[name] for name in names}
        time.sleep(0.2)
    raise AssertionError(f"the tree never held {names}: {[e.name for e in tree.walk()]}")


@pytest.mark.parametrize(
    "action",
    [{"action": "left_click"}, {"type": "click"}, {"action": "double_click"}],
    ids=["anthropic", "openai", "double"],
)
def test_a_window_of_another_app_with_the_same_title_covers_the_element(
    display: Display, action: dict[str, str]
) -> None:
    with (
        LoggedApp([SYSTEM_PYTHON, APP, "discard"], display.env()) as behind,
        LoggedApp([SYSTEM_PYTHON, APP, "keep"], display.env()) as front,
        ComputerTool(display, elements=True) as tool,
    ):
        refs = buttons(tool, "Discard", "Keep")
        result = tool({**action, "element": refs["Discard"]})
        assert result.is_error and result.error_type == "ElementCoveredError", result.error
        assert "window 'Twin'" in (result.error or "")
        assert "of another application is in front there; nothing was done" in (result.error or "")
        assert str(front.process.pid) in (result.error or "")  # named by its process
        assert not tool({"action": "screenshot"}).is_error  # the tool goes on
        assert front.said() == [] and behind.said() == []  # nothing was clicked

        # the button in front is clicked, and only it
        done = tool({**action, "element": refs["Keep"]})
        assert not done.is_error, done.error
        front.wait_for("clicked Keep")
        assert behind.said() == []


def test_another_window_of_the_same_app_and_title_covers_the_element(display: Display) -> None:
    with (
        LoggedApp([SYSTEM_PYTHON, APP, "both"], display.env()) as app,
        ComputerTool(display, elements=True) as tool,
    ):
        refs = buttons(tool, "Discard", "Keep")
        result = tool({"action": "left_click", "element": refs["Discard"]})
        assert result.is_error and result.error_type == "ElementCoveredError", result.error
        assert "another window of application 'twin_windows.py', is in front there" in (
            result.error or ""
        )
        assert app.said() == []
        done = tool({"type": "click", "element": refs["Keep"]})
        assert not done.is_error, done.error
        assert app.wait_for("clicked Keep") == ["clicked Keep"]
