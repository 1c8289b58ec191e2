"""The browser toolset on a desktop's Chromium: a Chromium shown on a viewfinder
display (not headless), attached to as it runs, and one the toolset launches there.

The page paints a clicked button green and logs it (``window.log``): the display's
own pixels show the click, and the page's log that nothing else was clicked.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.browser.toolset import ALL_MEMBERS, BrowserToolset
from viewfinder.cdp import launch_chromium
from viewfinder.cdp.testing import serve_pages
from viewfinder.xvfb import Display

sys.path.insert(0, str(Path(__file__).parent))
from toolset_pages import ref_of, state_of, text_of, tool_use, validate_result

GREEN, BLUE = (0, 160, 0), (0, 0, 255)
PAGE = """<!doctype html><title>Desk</title>
<body style="margin:0;background:#fff">
<label>Name <input name="name"></label>
<button style="position:absolute;left:40px;top:120px;width:140px;height:50px;border:0;
  background:#00f;color:#00f">Save</button>
<button style="position:absolute;left:260px;top:120px;width:140px;height:50px;border:0;
  background:#00f;color:#00f">Cancel</button>
<script>
window.log = [];
for (const b of document.querySelectorAll('button')) b.addEventListener('click', () => {
  window.log.push(b.textContent); b.style.background = b.style.color = 'rgb(0,160,0)'; });
</script></body>"""


@pytest.fixture(scope="module")
def screen() -> Iterator[tuple[Display, str]]:
    with Display(800, 600) as display, serve_pages({"/": PAGE}) as base:
        yield display, base


def call(browser: BrowserToolset, name: str, **arguments: Any) -> str:
    result = browser.run(tool_use(name, arguments))
    validate_result(result)
    assert not result.get("is_error"), text_of(result)
    return text_of(result)


def green_pixels(display: Display) -> int:
    with display.backend() as backend:
        image = backend.capture().to_pil().convert("RGB")
    counts = image.getcolors(maxcolors=image.width * image.height) or []
    return sum(count for count, colour in counts if colour == GREEN)


def test_a_running_desktop_chromium_is_driven_by_ref(screen: tuple[Display, str]) -> None:
    display, base = screen
    chromium = launch_chromium(
        headless=False,
        width=800,
        height=600,
        extra_args=["--window-position=0,0", f"{base}/"],
        env=display.env(),
    )
    try:
        with BrowserToolset(cdp_url=chromium.ws_url, configs=ALL_MEMBERS) as browser:
            tabs = state_of(browser.run(tool_use("list_tabs", {})))["tabs"]
            shown = [tab for tab in tabs if tab["url"] == f"{base}/"]
            assert len(shown) == 1 and shown[0]["active"], tabs
            # the tab has its URL before its document is parsed: read it once it is
            for _ in range(100):
                if call(browser, "javascript_exec", text="document.readyState") == "complete":
                    break
                call(browser, "wait", duration=0.1)
            assert green_pixels(display) == 0
            tree = call(browser, "read_page", filter="interactive")
            call(
                browser,
                "form_input",
                target={"type": "ref", "ref": ref_of(tree, "textbox")},
                value="Ada",
            )
            call(
                browser, "left_click", target={"type": "ref", "ref": ref_of(tree, 'button "Save"')}
            )
            log = json.loads(call(browser, "javascript_exec", text="JSON.stringify(window.log)"))
            assert log == ["Save"]
            assert (
                call(
                    browser,
                    "javascript_exec",
                    text="document.forms.length + document.querySelector('input').value",
                )
                == "0Ada"
            )
            # the click shows on the display itself: the Save button, 140 x 50, is green
            assert 140 * 50 * 0.9 <= green_pixels(display) <= 140 * 50 * 1.1
        # attached, not launched: the browser and its page are left as they were
        assert chromium.running
    finally:
        chromium.stop()


def test_the_toolset_launches_its_chromium_on_the_display(screen: tuple[Display, str]) -> None:
    display, base = screen
    with BrowserToolset(
        f"{base}/", display=display, width=800, height=600, configs=ALL_MEMBERS
    ) as browser:
        found = call(browser, "find", query="cancel button")
        call(browser, "left_click", target={"type": "ref", "ref": ref_of(found, 'button "Cancel"')})
        log = json.loads(call(browser, "javascript_exec", text="JSON.stringify(window.log)"))
        assert log == ["Cancel"]
        shot = browser.run(tool_use("screenshot", {}))
        validate_result(shot)
        assert any(part["type"] == "image" for part in shot["content"])
        assert 140 * 50 * 0.9 <= green_pixels(display) <= 140 * 50 * 1.1
        launched = browser.browser
    assert launched is not None and not launched.running  # stopped with the toolset
