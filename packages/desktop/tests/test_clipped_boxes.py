"""Element boxes clipped to what holds them, on real apps read over AT-SPI.

A GTK list in a scrolled pane (gtk_scrolled_list.py, system Python) scrolled so "Row 8"
shows only its top 6 px above a button "Under": the row is offered with its visible
part only, so a click by its ref, or at the centre of its listed box, lands on the row,
never on "Under"; the rows scrolled wholly away are not offered. A Chromium page (read
over AT-SPI, ``--force-renderer-accessibility``) with an overflow box hiding a button
("Hidden", visible but not showing) over another ("Under") and cutting one in half
("Half"): "Hidden" is never offered, and a click at the listed box of each button that
is offered lands on it (the page logs clicks in its title).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.cdp import launch_chromium
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import ElementTree
from viewfinder.core.testing import wait_until
from viewfinder.desktop import ComputerTool
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
LIST_APP = HERE / "gtk_scrolled_list.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
BUTTON = re.compile(r'^\s*(e\d+) push button "([\w ]+)"(?: \[\w+\])* @(\d+),(\d+) (\d+)x(\d+)$')
PAGE = """<!doctype html><title>clicks:</title>
<body style="margin:0;background:#fff">
  <div style="position:absolute;left:40px;top:40px;width:300px;height:100px;
    overflow:hidden;background:#eee">
    <button style="position:absolute;left:20px;top:10px;width:140px;height:40px"
      onclick="clicked(this)">Inside</button>
    <button style="position:absolute;left:20px;top:80px;width:140px;height:50px"
      onclick="clicked(this)">Half</button>
    <button style="position:absolute;left:20px;top:110px;width:140px;height:50px"
      onclick="clicked(this)">Hidden</button>
  </div>
  <button style="position:absolute;left:40px;top:140px;width:300px;height:60px"
    onclick="clicked(this)">Under</button>
  <script>function clicked(button) { document.title += " " + button.textContent; }</script>
</body>"""


def buttons(text: str) -> dict[str, tuple[str, tuple[int, int, int, int]]]:
    """Name -> (ref, listed box) of every push button line of a snapshot."""
    found = {}
    for line in text.splitlines():
        match = BUTTON.match(line)
        if match:
            box = tuple(int(value) for value in match.groups()[2:])
            found[match.group(2)] = (match.group(1), box)
    return found  # type: ignore[return-value]


def centre(box: tuple[int, int, int, int]) -> list[int]:
    return [box[0] + box[2] // 2, box[1] + box[3] // 2]


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(640, 480, accessibility=True) as display:
        yield display


@pytest.fixture
def scrolled(display: Display) -> Iterator[tuple[LoggedApp, ComputerTool]]:
    with (
        LoggedApp([SYSTEM_PYTHON, str(LIST_APP)], display.env()) as app,
        ComputerTool(display, target=(320, 240), elements=True) as tool,
    ):
        wait_until(
            lambda: "Under" in buttons(tool({"action": "screenshot"}).elements_text or ""),
            "the list to be read",
        )
        yield app, tool


def test_a_half_shown_row_is_offered_with_its_shown_part_and_a_click_by_ref_lands_on_it(
    scrolled: tuple[LoggedApp, ComputerTool],
) -> None:
    app, tool = scrolled
    text = tool({"action": "screenshot"}).elements_text or ""
    listed = buttons(text)
    ref, (_, y, _, height) = listed["Row 8"]
    # the pane ends at screen y 240 (model y 120): the row's box stops there
    assert y + height <= 120 and height <= 3, text
    for hidden in ("Row 9", "Row 10", "Row 11", "Row 12"):
        assert hidden not in listed, text  # scrolled wholly away: not offered
    app.said()
    clicked = tool({"action": "left_click", "element": ref})
    assert not clicked.is_error, clicked.error
    assert app.wait_for("clicked Row 8") == ["clicked Row 8"]
    assert app.said() == []  # never "clicked Under"


def test_every_offered_row_clicked_at_its_listed_centre_lands_on_it(
    scrolled: tuple[LoggedApp, ComputerTool],
) -> None:
    app, tool = scrolled
    text = tool({"action": "screenshot"}).elements_text or ""
    names = [name for name in buttons(text) if name.startswith("Row") or name == "Under"]
    assert names[-2:] == ["Row 8", "Under"], text
    for name in reversed(names):  # bottom up: a click that scrolls moves only rows above
        app.said()
        _, box = buttons(text)[name]
        result = tool({"action": "left_click", "coordinate": centre(box)})
        assert not result.is_error, result.error
        assert app.wait_for(f"clicked {name}") == [f"clicked {name}"], (name, box)
        text = result.elements_text or ""  # the boxes as the screen is now
    assert app.said() == []


@pytest.fixture
def overflow(display: Display) -> Iterator[ComputerTool]:
    with serve_pages({"/": PAGE}) as base:
        browser = launch_chromium(
            headless=False,
            width=640,
            height=480,
            extra_args=["--window-position=0,0", "--force-renderer-accessibility", f"{base}/"],
            env=display.env(),
        )
        try:
            with ComputerTool(display, elements=True) as tool:
                yield tool
        finally:
            browser.stop()


def titles(tree: ElementTree) -> list[str]:
    return [e.name for e in tree.walk() if e.name.startswith("clicks:")]


def test_a_button_hidden_in_an_overflow_box_is_never_offered_and_clicks_land(
    overflow: ComputerTool,
) -> None:
    tool = overflow
    deadline = time.monotonic() + 30
    listed: dict[str, tuple[str, tuple[int, int, int, int]]] = {}
    while time.monotonic() < deadline and "Under" not in listed:  # the page on the bus
        listed = buttons(tool({"action": "screenshot"}).elements_text or "")
        time.sleep(0.3)
    assert "Under" in listed and "Inside" in listed and "Half" in listed, listed
    assert "Hidden" not in listed  # visible, not showing: no box, not offered
    tree = tool.read_elements()
    (hidden,) = [e for e in tree.walk() if e.name == "Hidden" and e.role == "push button"]
    assert hidden.box is None
    _, half = listed["Half"]
    _, under = listed["Under"]
    assert half[1] + half[3] <= under[1]  # its shown part only, above 'Under'
    clicks: list[str] = []
    for name in ("Half", "Inside", "Under"):
        result = tool({"action": "left_click", "coordinate": centre(listed[name][1])})
        assert not result.is_error, result.error
        clicks.append(name)
        wanted = "clicks: " + " ".join(clicks)
        wait_until(
            lambda wanted=wanted: wanted in titles(tool.read_elements()),
            f"the page to log {wanted!r}",
        )
    assert "clicks: Half Inside Under" in titles(tool.read_elements())
    hidden_ref = hidden.ref
    refused = tool({"action": "left_click", "element": hidden_ref})
    assert refused.is_error and refused.error_type == "ElementGoneError"
    assert "clicks: Half Inside Under" in titles(tool.read_elements())  # nothing more
