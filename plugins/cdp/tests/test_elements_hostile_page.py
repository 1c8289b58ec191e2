"""The cdp source reads a page in a world of its own: a page that patches the DOM's
methods (boxes, styles, attributes, JSON) and plants the reader's global gets its
true elements read, and a click at a listed box lands on the element it names (the
page's own log says nothing else was clicked)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.launcher import ChromiumProcess
from viewfinder.cdp.testing import serve_pages

sys.path.insert(0, str(Path(__file__).parent))
from page_clicks import click_and_read_log

HOSTILE = """<!doctype html><title>Hostile</title><body style="margin:0">
<button style="position:absolute;left:40px;top:40px;width:120px;height:40px">Save</button>
<button style="position:absolute;left:40px;top:140px;width:120px;height:40px">Delete</button>
<script>
  window.clicked = [];
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    window.clicked.push(button ? button.textContent : "(nothing)");
  }, true);
  // every box said to be the Delete button's, every name a lie, every style hidden
  const fake = new DOMRect(40, 140, 120, 40);
  Element.prototype.getBoundingClientRect = () => fake;
  Range.prototype.getBoundingClientRect = () => fake;
  Element.prototype.getAttribute = () => "Delete";
  window.getComputedStyle = () => ({display: "none", visibility: "hidden"});
  JSON.stringify = () => "{}";
  WeakMap.prototype.get = () => 1;
  window.__viewfinder = {ids: new WeakMap(), next: 1, epoch: "planted"};
</script></body>"""


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_pages({"/": HOSTILE}) as base:
        yield f"{base}/"


def test_a_page_patching_the_dom_gets_its_true_elements_read(
    browser: ChromiumProcess, url: str
) -> None:
    with CdpElementSource(url=url, cdp_url=browser.ws_url, width=640, height=480) as source:
        first = source.read()
        buttons = {e.name: e for e in first.walk() if e.role == "button"}
        assert set(buttons) == {"Save", "Delete"}
        save = buttons["Save"]
        assert save.box is not None and (save.box.x, save.box.y) == (40, 40)
        assert (save.box.width, save.box.height) == (120, 40)
        again = source.read()  # the same node keeps its ref
        assert next(e for e in again.walk() if e.name == "Save").ref == save.ref
        assert click_and_read_log(source, save.box.center) == ["Save"]
