"""Every Anthropic and OpenAI computer-use action performed on a real Tk form on a real
Xvfb, with its effect seen in the form's own state and, where it shows, in the pixels of
the screenshot the action returned.

The form (examples/desktop_form.py) runs on a 1920x1080 screen seen by the model at
1024x768.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from viewfinder.core import EventKind
from viewfinder.desktop import ComputerResult, ComputerTool


@pytest.fixture(scope="module")
def tool(form_screen: Any) -> Iterator[ComputerTool]:
    with ComputerTool(form_screen.display, target="XGA") as computer:
        yield computer


def at(tool: ComputerTool, form: Any, widget: str, dx: int = 0, dy: int = 0) -> list[int]:
    """Where the model clicks to hit ``widget`` (its centre, moved by dx, dy screen px)."""
    x, y = form.centre(widget)
    return list(tool.scaling.to_model(x + dx, y + dy))


def rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


def shown(
    result: ComputerResult, tool: ComputerTool, form: Any, widget: str
) -> tuple[int, int, int]:
    """The colour the returned screenshot shows at the centre of ``widget``."""
    assert not result.is_error, result.error
    assert result.screenshot is not None and result.screenshot.size == (1024, 768)
    return result.screenshot.pixel(*tool.scaling.to_model(*form.centre(widget)))


SWATCH = ("#d03030", "#30a040", "#3050d0")


def test_anthropic_left_click_changes_the_swatch(tool: ComputerTool, form_screen: Any) -> None:
    clicks = form_screen.state()["swatch"]["clicks"]
    result = tool({"action": "left_click", "coordinate": at(tool, form_screen, "button")})
    form_screen.wait_for(lambda s: s["swatch"]["clicks"] == clicks + 1, "the Apply click")
    assert shown(result, tool, form_screen, "swatch") == rgb(SWATCH[clicks % 3])
    assert result.event is not None and result.event.kind is EventKind.CLICK


def test_openai_click_changes_the_swatch(tool: ComputerTool, form_screen: Any) -> None:
    clicks = form_screen.state()["swatch"]["clicks"]
    x, y = at(tool, form_screen, "button")
    result = tool({"type": "click", "button": "left", "x": x, "y": y})
    form_screen.wait_for(lambda s: s["swatch"]["clicks"] == clicks + 1, "the Apply click")
    assert shown(result, tool, form_screen, "swatch") == rgb(SWATCH[clicks % 3])


def test_typing_and_triple_click_selection(tool: ComputerTool, form_screen: Any) -> None:
    entry = at(tool, form_screen, "entry")
    tool({"action": "triple_click", "coordinate": entry})
    tool({"action": "key", "text": "BackSpace"})
    tool({"action": "type", "text": "Ada Lovelace"})
    form_screen.wait_for(lambda s: s["entry"]["text"] == "Ada Lovelace", "the typed name")
    x, y = entry
    tool({"type": "type", "text": " & Co"})
    form_screen.wait_for(lambda s: s["entry"]["text"] == "Ada Lovelace & Co", "OpenAI typing")
    result = tool({"action": "triple_click", "coordinate": [x, y]})
    selection = form_screen.wait_for(lambda s: s["entry"]["selection"], "the selection")
    assert selection == [0, len("Ada Lovelace & Co")]
    assert result.event is not None and result.event.kind is EventKind.TRIPLE_CLICK


@pytest.mark.parametrize(
    ("action", "combo"),
    [
        ({"action": "key", "text": "ctrl+s"}, "ctrl+s"),
        ({"action": "key", "text": "alt+F4"}, "alt+F4"),
        ({"type": "keypress", "keys": ["CTRL", "SHIFT", "Z"]}, "ctrl+shift+Z"),
        ({"type": "keypress", "keys": ["ENTER"]}, "Return"),
        ({"type": "click", "button": "back", "x": 900, "y": 700}, "XF86Back"),
        ({"type": "click", "button": "forward", "x": 900, "y": 700}, "XF86Forward"),
    ],
)
def test_key_combinations_reach_the_form(
    tool: ComputerTool, form_screen: Any, action: dict[str, Any], combo: str
) -> None:
    tool({"action": "key", "text": "Escape"})
    form_screen.wait_for(lambda s: s["last_key"] == "Escape", "a fresh start")
    result = tool(action)
    assert not result.is_error, result.error
    form_screen.wait_for(lambda s: s["last_key"] == combo, f"{combo} on the form")


def test_hold_key_holds_the_key_down(tool: ComputerTool, form_screen: Any) -> None:
    result = tool({"action": "hold_key", "text": "shift", "duration": 0.4})
    held = form_screen.wait_for(
        lambda s: s["held"] if s["held"]["key"] == "Shift_L" else None, "shift"
    )
    assert held["seconds"] >= 0.35
    assert result.event is not None and result.event.duration_s == 0.4


def test_mouse_down_and_up_press_and_release_the_pad(tool: ComputerTool, form_screen: Any) -> None:
    down = tool({"action": "left_mouse_down", "coordinate": at(tool, form_screen, "pad")})
    form_screen.wait_for(lambda s: s["pad"]["pressed"], "the pad pressed")
    assert shown(down, tool, form_screen, "pad") == rgb("#202020")
    up = tool({"action": "left_mouse_up"})
    form_screen.wait_for(lambda s: not s["pad"]["pressed"], "the pad released")
    assert shown(up, tool, form_screen, "pad") == rgb("#b0b0b0")


def test_other_buttons_and_double_clicks_on_the_pad(tool: ComputerTool, form_screen: Any) -> None:
    pad = at(tool, form_screen, "pad")
    before = form_screen.state()["pad"]
    tool({"action": "right_click", "coordinate": pad})
    tool({"action": "middle_click", "coordinate": pad})
    tool({"type": "click", "button": "right", "x": pad[0], "y": pad[1]})
    tool({"type": "click", "button": "wheel", "x": pad[0], "y": pad[1]})
    tool({"action": "double_click", "coordinate": pad})
    tool({"action": "mouse_move", "coordinate": at(tool, form_screen, "pad", dx=60)})
    tool({"type": "double_click", "x": pad[0], "y": pad[1]})
    after = form_screen.wait_for(
        lambda s: s["pad"] if s["pad"]["double"] == before["double"] + 2 else None, "the clicks"
    )
    assert after["right"] == before["right"] + 2
    assert after["middle"] == before["middle"] + 2


def test_moving_the_pointer_hovers(tool: ComputerTool, form_screen: Any) -> None:
    inside = tool({"action": "mouse_move", "coordinate": at(tool, form_screen, "hover")})
    form_screen.wait_for(lambda s: s["hover"], "the hover patch lit")
    assert shown(inside, tool, form_screen, "hover") == rgb("#f0c000")
    cursor = tool({"action": "cursor_position"})
    assert cursor.text == "X={},Y={}".format(*at(tool, form_screen, "hover"))
    assert cursor.screenshot is None and cursor.settle is None
    x, y = at(tool, form_screen, "canvas")
    outside = tool({"type": "move", "x": x, "y": y})
    form_screen.wait_for(lambda s: not s["hover"], "the hover patch dark")
    assert shown(outside, tool, form_screen, "hover") == rgb("#a0a0a0")


def test_drags_move_the_slider(tool: ComputerTool, form_screen: Any) -> None:
    x, y, width, height = form_screen.layout["slider"]
    start = list(
        tool.scaling.to_model(
            x + 15 + form_screen.state()["slider"] * (width - 30) // 100, y + height // 2
        )
    )
    end = list(tool.scaling.to_model(x + width - 5, y + height // 2))
    tool({"action": "left_click_drag", "start_coordinate": start, "coordinate": end})
    form_screen.wait_for(lambda s: s["slider"] == 100, "the slider at its end")
    middle = list(tool.scaling.to_model(x + width // 2, y + height // 2))
    path = [
        {"x": end[0], "y": end[1]},
        {"x": middle[0], "y": middle[1] + 40},
        {"x": middle[0], "y": middle[1]},
    ]
    tool({"type": "drag", "path": path})
    value = form_screen.wait_for(
        lambda s: s["slider"] if s["slider"] < 100 else None, "the slider back"
    )
    assert 40 <= value <= 60


def test_an_openai_drag_goes_through_every_point_with_the_button_held(
    tool: ComputerTool, form_screen: Any
) -> None:
    corners = [(-100, -50), (100, -50), (100, 50), (-100, 50)]
    path = [
        dict(zip("xy", at(tool, form_screen, "pad", dx, dy), strict=True)) for dx, dy in corners
    ]
    result = tool({"type": "drag", "path": path})
    pad_x, pad_y = form_screen.centre("pad")
    last_x, last_y = pad_x + corners[-1][0], pad_y + corners[-1][1]

    def ended_at_the_last_corner(state: dict[str, Any]) -> Any:
        # the release comes after every motion; a busy Tk may fold motions together,
        # but the last one it reports is where the pointer ended
        trail = state["trail"]
        if state["pad"]["pressed"] or not trail:
            return None
        x, y = trail[-1]
        return trail if abs(x - last_x) <= 2 and abs(y - last_y) <= 2 else None

    trail = form_screen.wait_for(ended_at_the_last_corner, "the trail and the release")
    for dx, dy in corners[1:]:
        assert any(abs(px - pad_x - dx) <= 2 and abs(py - pad_y - dy) <= 2 for px, py in trail), (
            dx,
            dy,
        )
    assert result.event is not None and result.event.kind is EventKind.DRAG


def test_scrolling_moves_the_list(tool: ComputerTool, form_screen: Any) -> None:
    listbox = at(tool, form_screen, "list")
    up = {"action": "scroll", "coordinate": listbox, "scroll_direction": "up", "scroll_amount": 10}
    tool(up)
    form_screen.wait_for(lambda s: s["list"]["top"] == 0, "the list at its top")
    down = tool({**up, "scroll_direction": "down", "scroll_amount": 2})
    form_screen.wait_for(lambda s: s["list"]["top"] == 10, "two clicks down (5 rows each)")
    assert down.event is not None and down.event.scroll_dy == 2
    x, y = listbox
    # 200 model px are 281 screen px: 3 wheel clicks up
    back = tool({"type": "scroll", "x": x, "y": y, "scroll_x": 0, "scroll_y": -200})
    form_screen.wait_for(lambda s: s["list"]["top"] == 0, "the list back up")
    assert back.event is not None and back.event.scroll_dy == -3
    tool({**up, "scroll_direction": "down", "scroll_amount": 1, "text": "ctrl"})
    wheel = form_screen.wait_for(
        lambda s: s["wheel"] if "ctrl" in s["wheel"]["modifiers"] else None, "ctrl held"
    )
    assert wheel["widget"] == "list"
    tool({**up, "scroll_direction": "right", "scroll_amount": 1})
    # Tk 8.6 hands a horizontal wheel click to its widgets as Shift and the vertical wheel
    form_screen.wait_for(lambda s: s["wheel"]["modifiers"] == ["shift"], "the horizontal click")


def test_wait_and_screenshot_show_the_screen_as_it_is(tool: ComputerTool, form_screen: Any) -> None:
    colour = form_screen.state()["swatch"]["colour"]
    waited = tool({"action": "wait", "duration": 0.1})
    assert shown(waited, tool, form_screen, "swatch") == rgb(colour)
    assert waited.settle is not None and waited.event is not None
    assert waited.event.kind is EventKind.WAIT
    for action in ({"action": "screenshot"}, {"type": "screenshot"}, {"type": "wait"}):
        result = tool(action)
        assert shown(result, tool, form_screen, "swatch") == rgb(colour)
