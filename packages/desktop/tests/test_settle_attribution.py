"""Settle knows whose change it is: an answered action that drew nothing returns at once,
another window's repaints are not the action's, and one late frame of a spinner does not
end the wait (settle_scene_app.py on a real Xvfb; every click checked in the app's log)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.desktop import ComputerTool, SettleOptions
from viewfinder.desktop.testing import LoggedApp
from viewfinder.xvfb import Display

APP = Path(__file__).parent / "settle_scene_app.py"
WHITE = (255, 255, 255)
RED = (0xD0, 0x30, 0x30)
PANEL = (200, 190)  # the panel's centre (the screen is the model's size: no scaling)
BLANK = (300, 70)  # a spot of the canvas that no click changes
GO = (70, 40)


@pytest.fixture
def display() -> Iterator[Display]:
    with Display(1024, 768) as running:
        yield running


def start(display: Display, *args: str) -> LoggedApp:
    return LoggedApp([sys.executable, str(APP), *args], display.env())


def click(tool: ComputerTool, point: tuple[int, int]) -> Any:
    result = tool({"action": "left_click", "coordinate": list(point)})
    assert not result.is_error, result.error
    assert result.settle is not None and result.screenshot is not None
    return result


def test_an_answered_click_that_draws_nothing_returns_no_change_before_a_later_one(
    display: Display,
) -> None:
    """The app handles the click (answers the ping behind it) and draws nothing: the
    result says "no change" and shows the panel as it was, though the app recolours the
    panel 0.3 s later, which the old 0.5 s wait for a first change took as the click's.
    That later change is reported by the next action."""
    with start(display, "target", "--later", "300") as app, ComputerTool(display) as tool:
        result = click(tool, BLANK)
        assert app.wait_for("click blank") == ["click blank"]
        assert not result.settle.changed, result.text
        assert "no change on the screen" in result.text
        assert result.screenshot.pixel(*PANEL) == WHITE
        app.wait_for("drawn 1")
        later = tool({"action": "mouse_move", "coordinate": [900, 700]})
        assert "the screen changed after the last screenshot" in later.text
        assert later.screenshot is not None and later.screenshot.pixel(*PANEL) == RED
        assert app.said() == []  # nothing else was clicked


def test_a_banner_changing_on_its_own_is_not_the_clicks_change(display: Display) -> None:
    """A banner in another app's window changes colour every 40 ms. A click on a spot
    that changes nothing is "no change" (the banner's repaints are said to be
    elsewhere); a click on Go waits for Go's effect only; and the banner teaches no
    longer wait to the clicks that follow."""
    with (
        start(display, "banner", "--every", "40") as banner,
        start(display, "target") as app,
        ComputerTool(display) as tool,
    ):
        blank = click(tool, BLANK)
        assert app.wait_for("click blank") == ["click blank"]
        assert not blank.settle.changed, blank.text
        assert "other windows changed meanwhile" in blank.text
        assert blank.screenshot.pixel(*PANEL) == WHITE
        for effect in range(1, 4):
            go = click(tool, GO)
            assert app.wait_for("click go") == ["click go"]
            assert app.wait_for(f"drawn {effect}") == [f"drawn {effect}"]
            assert go.settle.changed and go.settle.settled, go.text
            assert go.settle.held_s == 0.0, go.text  # nothing late was learned
            assert "the screen changed after the last screenshot" not in go.text
            assert go.screenshot.pixel(*PANEL) != WHITE
        assert app.said() == [] and banner.said() == []


def test_a_spinner_with_one_late_frame_is_still_changing_at_the_deadline(
    display: Display,
) -> None:
    """A click starts a spinner (a frame every 30 ms, the 20th 100 ms late, for ever):
    the late frame's gap, past the patience for a bigger change, is no quiet; the
    result says the screen was still changing."""
    options = SettleOptions(timeout=1.5)
    with start(display, "spinner") as app, ComputerTool(display, settle=options) as tool:
        result = click(tool, BLANK)
        assert app.wait_for("click spin") == ["click spin"]
        assert result.settle.changed and not result.settle.settled, result.text
        assert "still changing" in result.text
        assert app.said() == []
