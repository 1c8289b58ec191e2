"""The cdp source on real Chromium: refs bound to their node (a row inserted above a
ref'd button leaves the ref on it), iframes read (a same-origin srcdoc form and a
cross-origin page in its own process) with boxes where they are drawn, and a running
browser read as it is (the page it shows, no tab opened). Every click is logged by the
page it lands in; the tests assert nothing else was clicked."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from viewfinder.cdp import connect
from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.launcher import ChromiumProcess, launch_chromium
from viewfinder.cdp.session import CDPSession
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import Element, ElementTree, Event, EventKind, elements

#: A document's clicks, sent to the top page's log (from any origin).
LOG = """<script>
  window.clicked = [];
  addEventListener("message", (event) => window.clicked.push(event.data));
  document.addEventListener("click", (event) => {
    const control = event.target.closest("button, input, a");
    top.postMessage(control ? (control.getAttribute("aria-label") || control.textContent)
                            : "(nothing)", "*");
  }, true);
</script>"""
INBOX = f"""<!doctype html><title>Inbox</title><body style="margin:0">
<ul id=list style="margin:0;padding:0;list-style:none">
  <li>Message 1 <button onclick="this.parentNode.remove()">Delete</button></li>
  <li>Message 2 <button onclick="this.parentNode.remove()">Delete</button></li>
  <li>Message 3 <button onclick="this.parentNode.remove()">Delete</button></li>
</ul>{LOG}</body>"""
FRAME_FORM = (
    "<body style='margin:0'><button style='margin:7px;width:90px;height:30px'>Same</button>"
    + LOG.replace('"', "&quot;")
    + "</body>"
)
CROSS = f"""<!doctype html><body style="margin:0">
<button style="margin:10px;width:90px;height:30px">Cross</button>{LOG}</body>"""


def frames_page(other: str) -> str:
    return f"""<!doctype html><title>Frames</title><body style="margin:0">
<button style="position:absolute;left:10px;top:10px;width:80px;height:30px">Top</button>
<iframe style="position:absolute;left:50px;top:100px;width:300px;height:100px;
  border:5px solid #888" srcdoc="{FRAME_FORM}"></iframe>
<iframe style="position:absolute;left:50px;top:250px;width:300px;height:100px;border:0"
  src="{other}/cross"></iframe>{LOG}</body>"""


@pytest.fixture(scope="module")
def sites() -> Iterator[str]:
    pages = {"/inbox": INBOX, "/cross": CROSS}
    with serve_pages(pages) as base, serve_pages(pages) as other_base:
        # another origin: another host name and another port
        pages["/frames"] = frames_page(other_base.replace("127.0.0.1", "localhost"))
        yield base


def one(tree: ElementTree, role: str, name: str) -> Element:
    found = [e for e in tree.walk() if e.role == role and e.name == name]
    assert len(found) == 1, f"{len(found)} elements {role} {name!r}"
    return found[0]


def clicked(source: CdpElementSource, count: int) -> list[str]:
    deadline = time.monotonic() + 10
    while True:  # messages from frames arrive a moment after the click
        log = list(source.backend.run(source.backend.session.evaluate("window.clicked")))
        if len(log) >= count or time.monotonic() > deadline:
            return log
        time.sleep(0.05)


def click(source: CdpElementSource, element: Element) -> None:
    assert element.box is not None, element
    source.backend.act(Event(kind=EventKind.CLICK, position=element.box.center))


def messages(tree: ElementTree) -> list[str]:
    return sorted(
        e.name.strip()
        for e in tree.walk()
        if e.role == "static text" and e.name.startswith("Message")
    )


def test_a_row_inserted_above_a_refd_button_leaves_the_ref_on_it(
    browser: ChromiumProcess, sites: str
) -> None:
    with CdpElementSource(url=f"{sites}/inbox", cdp_url=browser.ws_url) as source:
        first = source.read()
        deletes = [e for e in first.walk() if e.role == "button" and e.name == "Delete"]
        ref = deletes[2].ref  # the Delete of Message 3
        source.backend.run(
            source.backend.session.evaluate(
                "list.insertAdjacentHTML('afterbegin', '<li>Message 0 <button "
                'onclick="this.parentNode.remove()">Delete</button></li>\')'
            )
        )
        again = source.read()
        element = again.find(ref)
        assert element is not None
        click(source, element)
        assert clicked(source, 1) == ["Delete"]
        assert messages(source.read()) == ["Message 0", "Message 1", "Message 2"]
        # the ref of a removed row names nothing
        assert source.read().find(ref) is None


def test_same_origin_and_cross_origin_iframes_are_read_with_their_boxes(
    browser: ChromiumProcess, sites: str
) -> None:
    with CdpElementSource(url=f"{sites}/frames", cdp_url=browser.ws_url) as source:
        deadline = time.monotonic() + 15
        tree = source.read()
        while not any(e.name == "Cross" for e in tree.walk()) and time.monotonic() < deadline:
            time.sleep(0.2)  # the other origin's page loads in its own process
            tree = source.read()
        assert tree.reason == ""
        same, cross = one(tree, "button", "Same"), one(tree, "button", "Cross")
        frames = [e for e in tree.walk() if e.role == "iframe"]
        assert len(frames) == 2 and same in frames[0].children + tuple(
            d for c in frames[0].children for d in c.walk()
        )
        # inside the frames: the srcdoc's border and the button's margin, and the other
        assert same.box is not None and (same.box.x, same.box.y) == (50 + 5 + 7, 100 + 5 + 7)
        assert cross.box is not None and (cross.box.x, cross.box.y) == (50 + 10, 250 + 10)
        for count, element in enumerate((same, cross, one(tree, "button", "Top")), 1):
            click(source, element)
            assert clicked(source, count)[-1] == element.name
        assert clicked(source, 3) == ["Same", "Cross", "Top"]


async def browse(ws_url: str, url: str) -> None:
    async with await connect(ws_url) as connection:
        targets = await connection.call("Target.getTargets")
        page = next(t for t in targets["targetInfos"] if t["type"] == "page")
        await (await CDPSession.attach(connection, page["targetId"])).navigate(url)


def test_a_running_browser_is_read_as_it_shows_its_page(sites: str) -> None:
    with launch_chromium() as browser:
        # someone browses to the inbox in the browser's own tab
        asyncio.run(browse(browser.ws_url, f"{sites}/inbox"))
        tree = elements("cdp", cdp_url=browser.ws_url)
        assert messages(tree) == ["Message 1", "Message 2", "Message 3"]
        with CdpElementSource(cdp_url=browser.ws_url) as source:
            deletes = [e for e in source.read().walk() if e.role == "button"]
            click(source, deletes[1])
            assert clicked(source, 1) == ["Delete"]
            assert messages(source.read()) == ["Message 1", "Message 3"]
        # the page was read where it is: no tab opened, the one read still open
        with CdpElementSource(cdp_url=browser.ws_url) as source:
            assert messages(source.read()) == ["Message 1", "Message 3"]
            targets = source.backend.run(source.backend.connection.call("Target.getTargets"))
        pages = [t for t in targets["targetInfos"] if t["type"] == "page"]
        assert [page["url"] for page in pages] == [f"{sites}/inbox"]
