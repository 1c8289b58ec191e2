"""A desktop's apps are ready for input once it has started: their windows are mapped
and so are the widgets inside, though toolkits map those later (windows.wait_for_window);
and each pointer action names the application whose window it went to."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from viewfinder.desktop import Desktop

APP = Path(__file__).with_name("slow_to_map_app.py")


def test_a_click_right_after_start_reaches_a_widget_mapped_late(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    with Desktop(size=(320, 240), apps=[[sys.executable, str(APP), str(log)]]) as desktop:
        result = desktop.computer()({"action": "left_click", "coordinate": [160, 120]})
        assert not result.is_error, result.text
        deadline = time.monotonic() + 10
        while not log.exists() or not log.read_text():
            assert time.monotonic() < deadline, "the press never reached the button"
            time.sleep(0.05)
        assert log.read_text() == "pressed\n"


def test_a_click_names_the_application_it_went_to(tmp_path: Path) -> None:
    # what a cache built from the step log checks before replaying the click
    log = tmp_path / "app.log"
    with Desktop(size=(320, 240), apps=[[sys.executable, str(APP), str(log)]]) as desktop:
        tool = desktop.computer()
        on_app = tool({"action": "left_click", "coordinate": [160, 120]})
        assert on_app.event is not None
        assert on_app.event.window == "slow_to_map_app.py (tk/Tk)"
        typed = tool({"action": "type", "text": "x"})
        assert typed.event is not None and typed.event.window is None  # no point of its own
