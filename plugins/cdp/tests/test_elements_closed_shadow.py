"""Closed shadow roots: no script of any world sees inside them, so the cdp source asks
the DevTools protocol which elements hold one (custom elements, and built-in ones that
draw none of their own children) and reads what they hold; a click
at a listed box lands on the element it names. Where too many custom elements wait to
be asked, the read says what it left out."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.launcher import ChromiumProcess
from viewfinder.cdp.page_nodes import MAX_HOSTS_CHECKED
from viewfinder.cdp.testing import serve_pages

sys.path.insert(0, str(Path(__file__).parent))
from page_clicks import click_and_read_log

WIDGETS = """<!doctype html><title>Widgets</title><body style="margin:0">
<x-pay style="position:absolute;left:40px;top:40px"></x-pay>
<x-open style="position:absolute;left:40px;top:140px"></x-open>
<script>
  window.clicked = [];
  const button = (root, label) => {
    root.innerHTML = `<button style="width:140px;height:40px">${label}</button>`;
    root.querySelector("button").addEventListener("click", () => window.clicked.push(label));
  };
  customElements.define("x-pay", class extends HTMLElement {
    constructor() { super(); button(this.attachShadow({mode: "closed"}), "Pay now"); }
  });
  customElements.define("x-open", class extends HTMLElement {
    constructor() { super(); button(this.attachShadow({mode: "open"}), "Open one"); }
  });
</script></body>"""

#: Closed roots on built-in elements: a div's (no light children), a span's whose own
#: child (a "Delete all" button, unslotted) is not drawn, and a sized empty div with no
#: root at all (an icon).
BUILT_IN = """<!doctype html><title>Built-in hosts</title><body style="margin:0">
<div id="card" style="position:absolute;left:40px;top:40px"></div>
<span id="tag" style="position:absolute;left:40px;top:140px;display:inline-block"
  ><button>Delete all</button></span>
<div style="position:absolute;left:40px;top:240px;width:20px;height:20px;background:red"></div>
<script>
  window.clicked = [];
  for (const [id, label] of [["card", "Pay now"], ["tag", "Keep"]]) {
    const root = document.getElementById(id).attachShadow({mode: "closed"});
    root.innerHTML = `<button style="width:140px;height:40px">${label}</button>`;
    root.querySelector("button").addEventListener("click", () => window.clicked.push(label));
  }
</script></body>"""

MANY = (
    "<!doctype html><title>Many</title><body>"
    + "".join(f"<x-item>item {i}</x-item>" for i in range(MAX_HOSTS_CHECKED + 40))
    + "</body>"
)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_pages({"/": WIDGETS, "/many": MANY, "/built-in": BUILT_IN}) as base:
        yield base


def test_a_closed_shadow_roots_button_is_read_and_clicked_where_listed(
    browser: ChromiumProcess, site: str
) -> None:
    with CdpElementSource(url=site + "/", cdp_url=browser.ws_url, width=640, height=480) as source:
        tree = source.read()
        buttons = {e.name: e for e in tree.walk() if e.role == "button"}
        assert set(buttons) == {"Pay now", "Open one"}
        assert tree.reason == ""
        pay = buttons["Pay now"]
        assert pay.box is not None and (pay.box.x, pay.box.y) == (40, 40)
        assert (pay.box.width, pay.box.height) == (140, 40)
        assert next(e for e in source.read().walk() if e.name == "Pay now").ref == pay.ref
        assert click_and_read_log(source, pay.box.center) == ["Pay now"]


def test_closed_roots_on_built_in_elements_are_read_and_their_hidden_children_not_boxed(
    browser: ChromiumProcess, site: str
) -> None:
    url = site + "/built-in"
    with CdpElementSource(url=url, cdp_url=browser.ws_url, width=640, height=480) as source:
        tree = source.read()
        assert tree.reason == ""
        boxed = {e.name: e.box for e in tree.walk() if e.role == "button" and e.box is not None}
        # the span's own button is not drawn (its root is, in its place): no box for it
        assert set(boxed) == {"Pay now", "Keep"}
        for name, y in (("Pay now", 40), ("Keep", 140)):
            box = boxed[name]
            assert box is not None and (box.x, box.y, box.width, box.height) == (40, y, 140, 40)
        keep = boxed["Keep"]
        assert keep is not None
        assert click_and_read_log(source, keep.center) == ["Keep"]


def test_custom_elements_not_yet_asked_about_are_named_as_left_out(
    browser: ChromiumProcess, site: str
) -> None:
    url = site + "/many"
    with CdpElementSource(url=url, cdp_url=browser.ws_url, width=640, height=480) as source:
        first = source.read()
        assert "what 40 elements" in first.reason
        assert "closed shadow roots" in first.reason
        assert source.read().reason == ""  # the next read asked about the rest
