"""The cdp source reads a page in a world of its own: a page that patches the DOM's
methods (boxes, styles, attributes, JSON) and plants the reader's global gets its
true elements read, and a click at a listed box lands on the element it names (the
page's own log says nothing else was clicked)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.launcher import ChromiumProcess
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import Event, EventKind

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
        source.backend.act(Event(kind=EventKind.CLICK, position=save.box.center))
        deadline = time.monotonic() + 5
        log: list[str] = []
        while not log and time.monotonic() < deadline:
            log = list(source.backend.run(source.backend.session.evaluate("window.clicked")))
            time.sleep(0.05)
        assert log == ["Save"]
