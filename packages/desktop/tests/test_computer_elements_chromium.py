"""The ComputerTool's elements on a real Chromium shown on a display: the page's tree
(read over AT-SPI, ``--force-renderer-accessibility``) names its buttons and field with
boxes on their pixels, and a click by element lands on the button it names.

The page logs each click in its title and paints the clicked button green, so the
test sees what was clicked and that nothing else was.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from viewfinder.cdp import launch_chromium
from viewfinder.cdp.launcher import ChromiumProcess
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import ElementTree
from viewfinder.desktop import ComputerTool
from viewfinder.xvfb import Display

RED, BLUE, GREEN = (255, 0, 0), (0, 0, 255), (0, 128, 0)
PAGE = """<!doctype html><title>clicks:</title>
<body style="margin:0;background:#fff">
  <input aria-label="Name" value="Ada"
    style="position:absolute;left:40px;top:40px;width:200px;height:30px;border:0;background:#f00">
  <button style="position:absolute;left:40px;top:120px;width:140px;height:50px;border:0;
    background:#00f;color:#00f" onclick="clicked(this)">Save</button>
  <button style="position:absolute;left:260px;top:120px;width:140px;height:50px;border:0;
    background:#00f;color:#00f" onclick="clicked(this)">Cancel</button>
  <script>
    function clicked(button) {
      document.title += " " + button.textContent;
      button.style.background = "#008000";
      button.style.color = "#008000";
    }
  </script>
</body>"""


@pytest.fixture(scope="module")
def screen() -> Iterator[tuple[Display, ChromiumProcess]]:
    with Display(800, 600, accessibility=True) as display, serve_pages({"/": PAGE}) as base:
        browser = launch_chromium(
            headless=False,
            width=800,
            height=600,
            extra_args=[
                "--window-position=0,0",
                "--force-renderer-accessibility",
                f"{base}/",
            ],
            env=display.env(),  # Chromium joins the display's accessibility bus
        )
        try:
            yield display, browser
        finally:
            browser.stop()


def page_button(tree: ElementTree, name: str) -> tuple[str, tuple[int, int, int, int]]:
    found = [e for e in tree.walk() if e.role == "push button" and e.name == name]
    assert len(found) == 1, f"{len(found)} buttons {name!r}"
    box = found[0].box
    assert box is not None
    return found[0].ref, (box.x, box.y, box.width, box.height)


def test_a_click_by_element_lands_on_the_chromium_button_it_names(
    screen: tuple[Display, ChromiumProcess],
) -> None:
    display, _ = screen
    with ComputerTool(display, elements=True) as tool:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the page's tree is on the bus
            tree = tool.read_elements()
            if any(e.name == "Cancel" for e in tree.walk()):
                break
            time.sleep(0.5)
        shot = tool.screenshot().to_pil().convert("RGB")
        save_ref, (x, y, width, _) = page_button(tree, "Save")
        _, cancel = page_button(tree, "Cancel")
        # the boxes hold their pixels: screen pixels of the display (the model size here)
        assert shot.getpixel((x + width // 2, y + 3)) == BLUE
        assert shot.getpixel((cancel[0] + cancel[2] // 2, cancel[1] + 3)) == BLUE
        fields = [e for e in tree.walk() if e.name == "Name" and e.box is not None]
        assert fields and shot.getpixel((fields[0].box.x + 3, fields[0].box.y + 3)) == RED  # type: ignore[union-attr]

        result = tool({"action": "left_click", "element": save_ref})

        assert not result.is_error, result.text
        assert result.screenshot is not None
        after = result.screenshot.to_pil().convert("RGB")
        assert after.getpixel((x + width // 2, y + 3)) == GREEN  # Save was clicked
        assert after.getpixel((cancel[0] + cancel[2] // 2, cancel[1] + 3)) == BLUE  # not Cancel
        titles = [e.name for e in tool.read_elements().walk() if e.name.startswith("clicks:")]
        assert "clicks: Save" in titles, titles  # the page's own log: Save, once
        assert not any("Cancel" in title or "Save Save" in title for title in titles), titles
