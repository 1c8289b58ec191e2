"""One contract, every backend: the same tests run against xvfb, mss, cdp and canvas.

Each harness makes its screen show a block of a known colour at a known place; the tests
then read it back through the backend, in full and region captures, in every format.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from Xlib import X
from Xlib import display as xdisplay

from viewfinder.core import (
    CaptureBackend,
    Region,
    RegionError,
    Screenshot,
    get_backend,
)
from viewfinder.core.testing import Canvas, CanvasPlugin, ScreenshotLog
from viewfinder.xvfb import Display

WIDTH, HEIGHT = 640, 480
BLOCK = Region(x=120, y=80, width=200, height=120)
BLUE = (0, 0, 255)
WHITE = (255, 255, 255)


@dataclass
class Harness:
    """A backend plus a way to paint a coloured block on the screen it captures."""

    name: str
    backend: CaptureBackend
    paint: Callable[[Region, tuple[int, int, int]], None]


class XWindowPainter:
    """Paints blocks on an X display with override-redirect windows of a solid colour."""

    def __init__(self, name: str) -> None:
        self.connection = xdisplay.Display(name)
        self.screen = self.connection.screen()
        self.windows: list[Any] = []
        root = self.screen.root
        # a white backdrop over the whole screen, so "outside the block" is white too
        self._window(Region(x=0, y=0, width=WIDTH, height=HEIGHT), WHITE)
        self.root = root

    def _window(self, region: Region, rgb: tuple[int, int, int]) -> None:
        pixel = (rgb[0] << 16) | (rgb[1] << 8) | rgb[2]
        window = self.screen.root.create_window(
            region.x,
            region.y,
            region.width,
            region.height,
            0,
            self.screen.root_depth,
            X.InputOutput,
            X.CopyFromParent,
            background_pixel=pixel,
            override_redirect=True,
        )
        window.map()
        window.clear_area()
        self.connection.sync()
        self.windows.append(window)

    def paint(self, region: Region, rgb: tuple[int, int, int]) -> None:
        self._window(region, rgb)

    def close(self) -> None:
        for window in self.windows:
            window.destroy()
        self.connection.close()


def wait_for_colour(backend: CaptureBackend, x: int, y: int, rgb: tuple[int, int, int]) -> None:
    """X maps windows asynchronously: wait (with a deadline) until the block is visible."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        probe = backend.capture(region=Region(x=x, y=y, width=1, height=1))
        if probe.pixel(0, 0) == rgb:
            return
        time.sleep(0.02)
    raise AssertionError(f"colour {rgb} never appeared at ({x}, {y})")


@pytest.fixture(scope="module")
def xvfb_display() -> Iterator[Display]:
    with Display(WIDTH, HEIGHT) as display:
        yield display


@pytest.fixture(params=["canvas", "xvfb", "mss", "cdp"])
def harness(
    request: pytest.FixtureRequest, viewfinder_plugin: Callable[..., str]
) -> Iterator[Harness]:
    name = request.param
    if name == "canvas":
        canvas = Canvas(WIDTH, HEIGHT)
        viewfinder_plugin(CanvasPlugin(canvas), name="contract-canvas")
        with get_backend("canvas") as backend:
            yield Harness(name, backend, canvas.fill)
        return
    if name in ("xvfb", "mss"):
        display: Display = request.getfixturevalue("xvfb_display")
        painter = XWindowPainter(display.name)
        options: dict[str, Any] = {"display": display if name == "xvfb" else display.name}
        try:
            with get_backend(name, **options) as backend:

                def paint(region: Region, rgb: tuple[int, int, int]) -> None:
                    painter.paint(region, rgb)
                    wait_for_colour(backend, region.center.x, region.center.y, rgb)

                wait_for_colour(backend, 5, 5, WHITE)
                yield Harness(name, backend, paint)
        finally:
            painter.close()
        return
    with get_backend("cdp", width=WIDTH, height=HEIGHT) as backend:
        session = backend.start()

        def paint_page(region: Region, rgb: tuple[int, int, int]) -> None:
            script = (
                "(() => { const d = document.createElement('div');"
                f"d.style.cssText = 'position:absolute;left:{region.x}px;top:{region.y}px;"
                f"width:{region.width}px;height:{region.height}px;background:rgb{rgb}';"
                "document.body.appendChild(d); return true; })()"
            )
            backend.run(session.evaluate(script))
            wait_for_colour(backend, region.center.x, region.center.y, rgb)

        backend.run(session.evaluate("document.body.style.cssText='margin:0;background:#fff'"))
        wait_for_colour(backend, 5, 5, WHITE)
        yield Harness("cdp", backend, paint_page)


def test_full_capture_shows_the_block_where_it_was_drawn(harness: Harness) -> None:
    harness.paint(BLOCK, BLUE)
    shot = harness.backend.capture()
    assert (shot.width, shot.height) == (WIDTH, HEIGHT)
    assert shot.source == harness.name or harness.name == "canvas"
    for x, y in [(BLOCK.x, BLOCK.y), (BLOCK.right - 1, BLOCK.bottom - 1), BLOCK.center.as_tuple()]:
        assert shot.pixel(x, y) == BLUE, (x, y)
    for x, y in [
        (BLOCK.x - 1, BLOCK.y),
        (BLOCK.right, BLOCK.bottom),
        (5, 5),
        (WIDTH - 5, HEIGHT - 5),
    ]:
        assert shot.pixel(x, y) == WHITE, (x, y)


def test_region_capture_is_exactly_the_region(harness: Harness) -> None:
    harness.paint(BLOCK, BLUE)
    region = Region(x=BLOCK.x - 10, y=BLOCK.y - 10, width=40, height=30)
    shot = harness.backend.capture(region=region)
    assert (shot.width, shot.height) == (40, 30)
    assert shot.region == region
    assert shot.pixel(10, 10) == BLUE  # the block's top-left corner
    assert shot.pixel(39, 29) == BLUE
    assert shot.pixel(9, 10) == WHITE
    assert shot.pixel(10, 9) == WHITE


@pytest.mark.parametrize("fmt", ["png", "jpeg", "webp"])
def test_every_format(harness: Harness, fmt: str) -> None:
    harness.paint(BLOCK, BLUE)
    shot = harness.backend.capture(format=fmt, quality=90)
    assert shot.format == fmt
    assert shot.mime_type == f"image/{fmt}"
    r, g, b = shot.pixel(*BLOCK.center.as_tuple())
    assert b > 200 and r < 60 and g < 60  # lossy formats are close, not exact


def test_region_outside_the_screen_is_rejected(harness: Harness) -> None:
    with pytest.raises(RegionError):
        harness.backend.capture(region=Region(x=WIDTH - 10, y=0, width=20, height=10))


def test_each_capture_reaches_observers_once_with_the_backend_name(
    harness: Harness, captured_screenshots: ScreenshotLog
) -> None:
    collector = captured_screenshots
    harness.backend.capture(context={"step": 1})
    assert len(collector.contexts) == 1
    assert collector.contexts[0]["step"] == 1
    assert collector.contexts[0]["backend"] == harness.backend.name


async def test_async_capture_matches(harness: Harness) -> None:
    harness.paint(BLOCK, BLUE)
    shot = await harness.backend.acapture(region=BLOCK)
    assert shot.pixel(0, 0) == BLUE
    assert shot.pixel(BLOCK.width - 1, BLOCK.height - 1) == BLUE


def test_screen_size_and_json_round_trip(harness: Harness) -> None:
    assert harness.backend.screen_size() == (WIDTH, HEIGHT)
    shot = harness.backend.capture(region=BLOCK)
    again = Screenshot.model_validate_json(shot.model_dump_json())
    assert again == shot
    assert json.loads(shot.model_dump_json())["source"] == shot.source
