"""The cdp source's boxes on real Chromium at a device scale factor of 2, at 125 % zoom,
and clipped by a scrolling box: a click at the centre of each listed box lands on the
element it names, and the page's own log says nothing else was clicked."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest

from viewfinder.cdp.elements import CdpElementSource
from viewfinder.cdp.launcher import launch_chromium
from viewfinder.cdp.testing import serve_pages
from viewfinder.core import Element, ElementTree, Event, EventKind, Point
from viewfinder.xvfb import Display

#: Every click is logged by the page: the name of the control under it, or "(nothing)".
LOG = """<script>
  window.clicked = [];
  document.addEventListener("click", (event) => {
    const control = event.target.closest("button, input, a");
    window.clicked.push(control ? (control.getAttribute("aria-label") || control.textContent)
                                : "(nothing)");
  }, true);
</script>"""
PAGE = f"""<!doctype html><title>boxes</title>
<body style="margin:0;background:#fff;height:2000px">
  <input aria-label="Name" style="position:absolute;left:40px;top:40px;width:200px;height:30px">
  <button style="position:absolute;left:300px;top:40px;width:120px;height:40px">Save</button>
  <button style="position:absolute;left:300px;top:290px;width:150px;height:40px">Under</button>
  <div style="position:absolute;left:300px;top:150px;width:200px;height:60px;overflow:auto">
    <button style="width:150px;height:40px">Shown</button>
    <div style="height:100px"></div>
    <button style="width:150px;height:40px">Hidden</button>
  </div>
  <div style="position:absolute;left:40px;top:120px;width:200px;height:25px;overflow:hidden">
    <button style="margin-top:30px;width:120px;height:40px">Cut</button>
  </div>
  <button style="position:absolute;left:40px;top:260px;width:120px;height:40px">Cancel</button>
  {LOG}
</body>"""
#: The browser's own zoom, one step in: its window is found by the page's title.
ZOOM_IN = [
    "xdotool",
    "search",
    "--onlyvisible",
    "--name",
    "^boxes",
    "windowfocus",
    "--sync",
    "key",
    "ctrl+plus",
]
NAMED = ["Name", "Save", "Under", "Shown", "Cancel"]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_pages({"/": PAGE}) as base:
        yield f"{base}/"


def named(tree: ElementTree, name: str) -> Element:
    found = [e for e in tree.walk() if e.name == name and e.role in ("button", "textbox")]
    assert len(found) == 1, f"{len(found)} elements named {name!r}"
    return found[0]


def clicked(source: CdpElementSource) -> list[str]:
    return list(source.backend.run(source.backend.session.evaluate("window.clicked")))


def assert_clipped(tree: ElementTree) -> None:
    # scrolled out of its box, or cut off by a box shorter than it: not offered
    assert named(tree, "Hidden").box is None
    assert named(tree, "Cut").box is None


def test_a_headless_page_at_device_scale_2_gives_boxes_in_its_css_pixels(url: str) -> None:
    with (
        launch_chromium(width=800, height=600, extra_args=["--force-device-scale-factor=2"]) as b,
        CdpElementSource(url=url, cdp_url=b.ws_url, width=640, height=480) as source,
    ):
        tree = source.read()
        assert tree.coordinates == "page"
        assert_clipped(tree)
        for name in NAMED:
            box = named(tree, name).box
            assert box is not None, name
            source.backend.act(Event(kind=EventKind.CLICK, position=box.center))
            assert clicked(source)[-1] == name
        assert clicked(source) == NAMED
        save = named(tree, "Save").box
        assert save is not None and (save.x, save.y, save.width, save.height) == (300, 40, 120, 40)


def on_screen(
    url: str, display: Display, scale: float, zoom_steps: int
) -> Iterator[tuple[CdpElementSource, ElementTree]]:
    with (
        launch_chromium(
            headless=False,
            width=700,
            height=500,
            extra_args=[f"--force-device-scale-factor={scale}", "--window-position=30,20"],
            env={**display.env(), "DISPLAY": display.name},
        ) as browser,
        CdpElementSource(url=url, cdp_url=browser.ws_url) as source,
    ):
        source.read()  # the page now fills its window
        session = source.backend.session
        for _ in range(zoom_steps):  # the browser's own zoom: 100 -> 110 -> 125 %
            subprocess.run(
                ZOOM_IN,
                env={"DISPLAY": display.name, "PATH": "/usr/bin:/bin"},
                check=True,
                timeout=20,
            )
            time.sleep(0.5)
        metrics = source.backend.run(session.call("Page.getLayoutMetrics"))
        assert metrics["cssVisualViewport"]["zoom"] == pytest.approx(1.25 if zoom_steps else 1)
        yield source, source.read()


@pytest.mark.parametrize(("scale", "zoom_steps"), [(2, 0), (1, 2)], ids=["dpr2", "zoom125"])
def test_a_page_on_a_display_gives_screen_boxes_a_click_at_their_centre_hits(
    url: str, scale: float, zoom_steps: int
) -> None:
    with Display(1500, 1100) as display:
        for source, tree in on_screen(url, display, scale, zoom_steps):
            assert tree.coordinates == "screen"
            assert_clipped(tree)
            screen = display.backend()
            for name in NAMED:
                box = named(tree, name).box
                assert box is not None, name
                assert box.right <= 1500 and box.bottom <= 1100, (name, box)
                screen.act(Event(kind=EventKind.CLICK, position=box.center))
                deadline = time.monotonic() + 5
                while len(clicked(source)) < NAMED.index(name) + 1:
                    assert time.monotonic() < deadline, (name, box, clicked(source))
                    time.sleep(0.05)
                assert clicked(source)[-1] == name, (name, box)
            assert clicked(source) == NAMED
            save = named(tree, "Save").box
            # CSS 300,40 120x40, times the scale and the zoom, in the window's content
            factor = scale * (1.25 if zoom_steps else 1)
            assert save is not None and save.width == round(120 * factor)
            assert abs(save.x - (30 * scale + 300 * factor)) <= 1


def test_the_hidden_button_s_box_would_have_clicked_the_one_under_it(url: str) -> None:
    # what the read used to offer: 'Hidden' at its layout place, over 'Under'
    with (
        launch_chromium(width=800, height=600) as browser,
        CdpElementSource(url=url, cdp_url=browser.ws_url, width=640, height=480) as source,
    ):
        tree = source.read()
        at = source.backend.run(
            source.backend.session.evaluate(
                "(() => { const b = [...document.querySelectorAll('button')]"
                ".find(b => b.textContent === 'Hidden').getBoundingClientRect();"
                " return [b.x + b.width / 2, b.y + b.height / 2]; })()"
            )
        )
        source.backend.act(Event(kind=EventKind.CLICK, position=Point(x=int(at[0]), y=int(at[1]))))
        assert clicked(source) == ["Under"]  # its layout box is over another button
        assert named(tree, "Hidden").box is None
