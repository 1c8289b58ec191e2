"""Closed shadow roots: no script of any world sees inside them, so the cdp source asks
the DevTools protocol which custom elements hold one and reads what they hold; a click
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

MANY = (
    "<!doctype html><title>Many</title><body>"
    + "".join(f"<x-item>item {i}</x-item>" for i in range(MAX_HOSTS_CHECKED + 40))
    + "</body>"
)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_pages({"/": WIDGETS, "/many": MANY}) as base:
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


def test_custom_elements_not_yet_asked_about_are_named_as_left_out(
    browser: ChromiumProcess, site: str
) -> None:
    url = site + "/many"
    with CdpElementSource(url=url, cdp_url=browser.ws_url, width=640, height=480) as source:
        first = source.read()
        assert "what 40 custom elements" in first.reason
        assert "closed shadow roots" in first.reason
        assert source.read().reason == ""  # the next read asked about the rest
