"""The cdp element source on real Chromium: a page's tree with boxes on its pixels."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.launcher import ChromiumProcess, launch_chromium
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import (
    Element,
    ElementSourceError,
    ElementTree,
    Region,
    elements,
    get_element_source,
)
from viewfinder.xvfb import Display

RED, BLUE = (255, 0, 0), (0, 0, 255)
FORM = """<!doctype html><title>Form</title>
<body style="margin:0;background:#fff;height:3000px">
  <h1 style="margin:0;font-size:20px">Sign up</h1>
  <label>Name <input id=name value="Ada"
    style="position:absolute;left:40px;top:100px;width:200px;height:30px;border:0;background:#f00"></label>
  <button style="position:absolute;left:300px;top:100px;width:120px;height:40px;border:0;
    background:#00f;color:#00f">Save</button>
  <a href="#far" style="position:absolute;left:40px;top:2000px">Far link</a>
</body>"""


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_pages({"/form": FORM}) as base:
        yield f"{base}/form"


def only(tree: ElementTree, role: str, name: str) -> Element:
    found = [e for e in tree.walk() if e.role == role and e.name == name]
    assert len(found) == 1, f"{len(found)} elements {role} {name!r}"
    return found[0]


def assert_on_pixels(shot_pixel: object, element: Element, colour: tuple[int, int, int]) -> None:
    box = element.box
    assert box is not None
    pixel = shot_pixel  # the capture's pixel() method
    assert pixel(box.center.x, box.center.y) == colour  # type: ignore[operator]
    assert pixel(box.x + 1, box.y + 1) == colour  # type: ignore[operator]
    assert pixel(box.right - 2, box.bottom - 2) == colour  # type: ignore[operator]
    assert pixel(box.center.x, box.bottom + 2) != colour  # type: ignore[operator]


def test_a_headless_page_gives_named_elements_with_boxes_in_page_pixels(
    browser: ChromiumProcess, site: str
) -> None:
    with get_element_source(url=site, cdp_url=browser.ws_url, width=640, height=480) as source:
        assert isinstance(source, CdpElementSource)
        tree = source.read()
        shot = source.backend.capture()
    assert tree.source == "cdp" and tree.coordinates == "page"
    save = only(tree, "button", "Save")
    field = only(tree, "textbox", "Name")
    assert field.value == "Ada" and "focusable" in save.states
    assert only(tree, "heading", "Sign up").box is not None
    assert_on_pixels(shot.pixel, save, BLUE)
    assert_on_pixels(shot.pixel, field, RED)
    # below the viewport: in the tree, without a box
    assert only(tree, "link", "Far link").box is None


def test_a_scrolled_page_moves_the_boxes_and_keeps_the_refs(
    browser: ChromiumProcess, site: str
) -> None:
    with CdpElementSource(url=site, cdp_url=browser.ws_url, width=640, height=480) as source:
        before = source.read()
        source.backend.run(source.backend.session.evaluate("window.scrollTo(0, 1900)"))
        after = source.read()
        shot = source.backend.capture()
    link = only(after, "link", "Far link")
    assert link.ref == only(before, "link", "Far link").ref
    assert link.box is not None and 95 <= link.box.y <= 105  # 2000 - 1900
    assert only(after, "button", "Save").box is None  # scrolled away
    # the link's text is drawn inside its box, and only white is just above it
    inside = {colour for _, colour in shot.crop(link.box).to_pil().getcolors(4096) or []}
    assert inside - {(255, 255, 255)}
    above = shot.crop(Region(x=link.box.x, y=link.box.y - 20, width=link.box.width, height=15))
    assert {colour for _, colour in above.to_pil().getcolors(4096) or []} == {(255, 255, 255)}


def test_a_browser_on_a_display_gives_boxes_in_screen_pixels(
    site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Display(800, 600) as display:
        monkeypatch.setenv("DISPLAY", display.name)
        with (
            launch_chromium(
                headless=False, width=700, height=500, extra_args=["--window-position=40,30"]
            ) as browser,
            CdpElementSource(url=site, cdp_url=browser.ws_url, width=640, height=400) as source,
        ):
            tree = source.read()
            shot = display.backend().capture()
    assert tree.coordinates == "screen"
    save = only(tree, "button", "Save")
    assert save.box is not None and save.box.x >= 300 + 40  # the window's place is added
    assert_on_pixels(shot.pixel, save, BLUE)
    assert_on_pixels(shot.pixel, only(tree, "textbox", "Name"), RED)


def test_the_cdp_source_without_a_page_says_what_to_pass() -> None:
    with pytest.raises(ElementSourceError, match="no page: pass url"):
        elements("cdp")
