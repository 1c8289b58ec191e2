"""Element boxes in the model's coordinates when the model's image has another shape
than the screen: a 1280x800 screen shown at XGA (1024x768) is 0.8 of it across and
0.96 down. On a real Xvfb with a GTK column of buttons (gtk_button_column.py, run with
the system Python), every box the snapshot lists, its centre taken as a model's click
point, lands on the button it names (the app's own log says which, and nothing else),
and the Set-of-Mark outline of each button runs on that button's pixels.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.core.testing import wait_until
from viewfinder.desktop import ComputerTool
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
#: The column's buttons, top to bottom (gtk_button_column.py: NAMES).
NAMES = ("Open", "Draft", "Reply", "Forward", "Archive", "Label", "Send", "Delete")
COLUMN = HERE / "gtk_button_column.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
BLUE = (0, 0, 255)
MARK_COLOURS = {(0xE6, 0x19, 0x4B), (0x3C, 0xB4, 0x4B), (0x43, 0x63, 0xD8), (0xF5, 0x82, 0x31)}
MARK_COLOURS |= {(0x91, 0x1E, 0xB4), (0x00, 0x80, 0x80), (0x9A, 0x63, 0x24)}
BUTTON = re.compile(r'^\s*e\d+ push button "(\w+)"(?: \[\w+\])* @(\d+),(\d+) (\d+)x(\d+)$')


def buttons(text: str) -> dict[str, tuple[int, int, int, int]]:
    """Name -> listed box of every push button line of a snapshot."""
    found = {}
    for line in text.splitlines():
        match = BUTTON.match(line)
        if match:
            found[match.group(1)] = tuple(int(value) for value in match.groups()[1:])
    return found  # type: ignore[return-value]


def close_to(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 8) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour, strict=True))


@pytest.fixture(scope="module")
def column() -> Iterator[tuple[LoggedApp, ComputerTool]]:
    with (
        Display(1280, 800, accessibility=True) as display,
        LoggedApp([SYSTEM_PYTHON, str(COLUMN)], display.env()) as app,
        ComputerTool(display, target="XGA", elements=True) as tool,
    ):
        wait_until(
            lambda: len(buttons(tool({"action": "screenshot"}).elements_text or "")) == 8,
            "the column's eight buttons to be listed",
        )
        yield app, tool


def test_every_listed_box_clicked_at_its_centre_lands_on_its_button(
    column: tuple[LoggedApp, ComputerTool],
) -> None:
    app, tool = column
    result = tool({"action": "screenshot"})
    assert tool.model_size == (1024, 768)
    text = result.elements_text or ""
    assert "screen pixels x0.8 across, x0.96 down" in text.splitlines()[0]
    listed = buttons(text)
    assert set(listed) == set(NAMES), text
    for name in NAMES:
        x, y, width, height = listed[name]
        app.said()
        clicked = tool({"action": "left_click", "coordinate": [x + width // 2, y + height // 2]})
        assert not clicked.is_error, clicked.error
        assert app.wait_for(f"clicked {name}") == [f"clicked {name}"], (name, listed[name])
    assert app.said() == []  # nothing else was clicked


def test_each_set_of_mark_outline_runs_on_its_buttons_pixels(
    column: tuple[LoggedApp, ComputerTool],
) -> None:
    _, tool = column
    result = tool({"action": "screenshot", "set_of_mark": True})
    assert result.marked is not None and result.screenshot is not None
    assert result.marked.size == result.screenshot.size == (1024, 768)
    plain = result.screenshot.to_pil().convert("RGB")
    marked = result.marked.to_pil().convert("RGB")
    listed = buttons(result.elements_text or "")
    assert set(listed) == set(NAMES), result.elements_text
    for name, (x, y, width, height) in listed.items():
        left, right, bottom = x, x + width - 1, y + height - 1
        edges = [(left, y + height // 2), (right, y + height // 2), (x + width // 2, bottom)]
        edges += [(left, y + 2), (right, bottom), (left, bottom)]
        for point in edges:
            assert close_to(plain.getpixel(point), BLUE), (name, point, plain.getpixel(point))
            assert any(close_to(marked.getpixel(point), c, 2) for c in MARK_COLOURS), (
                name,
                point,
            )
        # just outside the outline, below it: the white between two buttons
        assert not close_to(plain.getpixel((x + width // 2, bottom + 6)), BLUE), name
