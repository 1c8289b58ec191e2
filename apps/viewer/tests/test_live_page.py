"""The live page in a real Chromium says what happened: a display that died, the
server's own refusal; and a click lands on the pixel under the pointer, whatever the
canvas's border and padding."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from viewfinder.core.testing import wait_until
from viewfinder.viewer import ViewerServer
from viewfinder.xvfb import Display

from .conftest import open_page


def live_page(page: Any, viewer: ViewerServer, name: str) -> None:
    open_page(page, f"{viewer.url}/?live={name}")


def status_of(page: Any) -> str:
    text: str = page.locator(".live-status").inner_text()
    return text


def test_the_page_says_the_display_died_when_its_x_server_is_killed(
    serve: Callable[..., ViewerServer], page: Any, record_property: Callable[[str, object], None]
) -> None:
    with Display(320, 240) as doomed:
        viewer = serve(live=(doomed.name,))
        live_page(page, viewer, doomed.name)
        page.wait_for_function("window.viewfinderLive && window.viewfinderLive.frames > 0")
        assert page.locator(".mode").inner_text() == "read-only"
        assert doomed.pid is not None
        os.kill(doomed.pid, signal.SIGKILL)
        killed = time.monotonic()
        page.wait_for_function("window.viewfinderLive.error !== null", timeout=20000)
        record_property("display_death_said_after_s", round(time.monotonic() - killed, 2))
        said = status_of(page)
        assert said.startswith(f"the live view ended: display {doomed.name} died: "), said
        assert "closed the connection" in said or "not running" in said, said
        assert page.locator(".mode").inner_text() == "ended"
        assert page.locator(".live-status.error").count() == 1


def test_a_display_that_is_not_running_is_said_as_the_server_said_it(
    serve: Callable[..., ViewerServer], page: Any
) -> None:
    number = next(n for n in range(899, 999) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    viewer = serve(live=(f":{number}",))
    live_page(page, viewer, f":{number}")
    page.wait_for_function("window.viewfinderLive && window.viewfinderLive.error !== null")
    page.wait_for_function("document.querySelector('.mode').textContent === 'disconnected'")
    said = status_of(page)
    assert f"X display :{number} is not running" in said, said
    assert "refused" not in said


def pointer_at(display: Display) -> tuple[int, int]:
    output = subprocess.run(
        ["xdotool", "getmouselocation"], env=display.env(), capture_output=True, text=True,
        check=True, timeout=20,
    ).stdout  # fmt: skip
    fields = dict(part.split(":", 1) for part in output.split())
    return int(fields["x"]), int(fields["y"])


def test_a_click_lands_on_the_pixel_under_it_past_the_canvas_border_and_padding(
    display: Display, serve: Callable[..., ViewerServer], page: Any
) -> None:
    viewer = serve(live=(display.name,), control=True)
    live_page(page, viewer, display.name)
    page.wait_for_function("window.viewfinderLive && window.viewfinderLive.frames > 0")
    page.add_style_tag(content=".live-canvas { border: 7px solid red; padding: 3px 5px; }")
    box = page.evaluate(
        """() => {
            const canvas = document.querySelector("canvas.live-canvas");
            const box = canvas.getBoundingClientRect();
            return {left: box.left, top: box.top, width: canvas.clientWidth};
        }"""
    )
    assert box["width"] == 800 + 10  # shown at its own size: one CSS pixel a pixel
    for x, y in [(0, 0), (123, 45), (799, 599), (400, 300)]:
        # the middle of display pixel (x, y): past the 7 px border and the padding
        page.mouse.click(box["left"] + 7 + 5 + x + 0.5, box["top"] + 7 + 3 + y + 0.5)
        wait_until(lambda x=x, y=y: pointer_at(display) == (x, y), f"the pointer at ({x}, {y})")
