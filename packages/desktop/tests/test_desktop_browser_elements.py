"""A desktop's own Chromium (``Desktop(browser_url=...)``) read through cdp: the page it
shows is in the ComputerTool's elements, in screen pixels, with or without the
display's accessibility buses, and a click by ref lands on the button it names (the
page's own log says nothing else was clicked)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from viewfinder.cdp.testing import serve_pages
from viewfinder.desktop import Desktop

PAGE = """<!doctype html><title>clicks:</title><body style="margin:0;background:#fff">
  <button style="position:absolute;left:60px;top:80px;width:140px;height:50px"
    onclick="document.title += ' Save'">Save</button>
  <button style="position:absolute;left:260px;top:80px;width:140px;height:50px"
    onclick="document.title += ' Cancel'">Cancel</button>
</body>"""


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_pages({"/": PAGE}) as base:
        yield f"{base}/"


@pytest.mark.parametrize("accessibility", [True, False], ids=["with-buses", "without"])
def test_a_desktop_s_chromium_is_read_and_clicked_by_ref(url: str, accessibility: bool) -> None:
    with Desktop(size=(1024, 768), browser_url=url, accessibility=accessibility) as desktop:
        tool = desktop.computer(elements=True)
        tree = tool.read_elements()
        buttons = {e.name: e for e in tree.walk() if e.role == "button"}
        assert set(buttons) == {"Save", "Cancel"}, (tree.reason, [e.name for e in tree.walk()])
        save = buttons["Save"].box
        assert save is not None and save.x == 60 and save.y > 80  # below the browser's bars

        result = tool({"action": "left_click", "element": buttons["Save"].ref})

        assert not result.is_error, result.text
        titles = [e.name for e in tool.read_elements().walk() if e.name.startswith("clicks:")]
        assert titles == ["clicks: Save"]
