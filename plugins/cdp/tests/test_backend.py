"""The ``cdp`` capture backend: pixels, regions, full pages, input, lifetime."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import viewfinder.core as core
from viewfinder.cdp import (
    CdpBackend,
    CDPConnectError,
    CDPConnectionClosedError,
    ChromiumProcess,
    launch_chromium,
)
from viewfinder.cdp.launcher import processes_mentioning
from viewfinder.core import (
    CaptureNotSupportedError,
    Event,
    EventKind,
    Point,
    Region,
    RegionError,
    Screenshot,
    hookimpl,
)
from viewfinder.core.testing import wait_until


def near(actual: tuple[int, int, int], expected: tuple[int, int, int], tolerance: int) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual, expected, strict=True))


@pytest.fixture
def attached(browser: ChromiumProcess, site: str, layout: Any) -> Iterator[CdpBackend]:
    """A backend showing the block page in the shared browser (attached, not launched)."""
    width, height = layout.viewport
    backend = CdpBackend(url=f"{site}/block", cdp_url=browser.http_url, width=width, height=height)
    try:
        yield backend
    finally:
        backend.close()


# -- pixels -------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "tolerance"), [("png", 0), ("jpeg", 24), ("webp", 24)])
def test_the_block_reads_back_in_its_colour(
    attached: CdpBackend, layout: Any, fmt: str, tolerance: int
) -> None:
    shot = attached.capture(format=fmt)
    assert shot.format == fmt
    assert shot.source == "cdp"
    assert shot.size == layout.viewport
    assert shot.to_pil().size == layout.viewport
    x, y, w, h = layout.block
    assert near(shot.pixel(x + w // 2, y + h // 2), layout.block_color, tolerance)
    assert near(shot.pixel(x + 5, y + 5), layout.block_color, tolerance)
    assert near(shot.pixel(x - 20, y + h // 2), (255, 255, 255), tolerance)
    assert near(shot.pixel(x + w // 2, y + h + 20), (255, 255, 255), tolerance)


@pytest.mark.parametrize(("fmt", "tolerance"), [("png", 0), ("jpeg", 24), ("webp", 24)])
def test_a_region_is_clipped_at_scale_one(
    attached: CdpBackend, layout: Any, fmt: str, tolerance: int
) -> None:
    x, y, _, _ = layout.block
    # Straddle the block's top-left corner: white above and left, blue below and right.
    region = Region(x=x - 30, y=y - 20, width=80, height=60)
    shot = attached.capture(region=region, format=fmt, quality=90)
    assert shot.size == (80, 60)
    assert shot.region == region
    assert near(shot.pixel(5, 5), (255, 255, 255), tolerance)
    assert near(shot.pixel(70, 50), layout.block_color, tolerance)


def test_quality_changes_lossy_output(attached: CdpBackend) -> None:
    low = attached.capture(format="jpeg", quality=5)
    high = attached.capture(format="jpeg", quality=100)
    assert len(low.data) < len(high.data)


def test_full_page_is_taller_than_the_viewport(
    browser: ChromiumProcess, site: str, layout: Any
) -> None:
    width, height = layout.viewport
    with CdpBackend(
        url=f"{site}/tall", cdp_url=browser.http_url, width=width, height=height, full_page=True
    ) as backend:
        shot = backend.capture()
        region_shot = backend.capture(region=Region(x=0, y=2450, width=200, height=200))
    assert shot.height == layout.tall_height > height
    assert shot.width == width
    x, y, w, h = layout.tall_block
    assert shot.pixel(x + w // 2, y + h // 2) == layout.tall_block_color
    assert shot.pixel(x + w // 2, 100) == (255, 255, 255)
    # In full-page mode a region is a part of the document, even below the viewport.
    assert region_shot.pixel(x + w // 2, 100) == layout.tall_block_color


def test_a_region_is_in_viewport_coordinates_on_a_scrolled_page(
    browser: ChromiumProcess, site: str, layout: Any
) -> None:
    width, height = layout.viewport
    x, y, w, h = layout.tall_block
    with CdpBackend(
        url=f"{site}/tall", cdp_url=browser.http_url, width=width, height=height
    ) as backend:
        backend.run(backend.session.evaluate(f"scrollTo(0, {y - 100})"))
        full = backend.capture()
        part = backend.capture(region=Region(x=0, y=50, width=200, height=200))
    # The block now sits 100 px below the top of the viewport, in both captures.
    assert full.pixel(x + w // 2, 100 + h // 2) == layout.tall_block_color
    assert part.pixel(x + w // 2, 50 + h // 2) == layout.tall_block_color
    assert part.pixel(x + w // 2, 20) == (255, 255, 255)


def test_viewport_capture_of_a_tall_page_is_the_viewport(
    browser: ChromiumProcess, site: str, layout: Any
) -> None:
    width, height = layout.viewport
    with CdpBackend(
        url=f"{site}/tall", cdp_url=browser.http_url, width=width, height=height
    ) as backend:
        assert backend.capture().size == (width, height)


# -- refusals -----------------------------------------------------------------------


def test_a_region_outside_the_viewport_is_a_region_error(attached: CdpBackend, layout: Any) -> None:
    width, height = layout.viewport
    with pytest.raises(RegionError):
        attached.capture(region=Region(x=width - 10, y=0, width=20, height=20))
    with pytest.raises(RegionError):
        attached.capture(region=Region(x=0, y=height, width=1, height=1))


def test_a_window_capture_is_not_supported(attached: CdpBackend) -> None:
    with pytest.raises(CaptureNotSupportedError):
        attached.capture(window=1)


# -- async use ----------------------------------------------------------------------


async def test_acapture_works_from_another_event_loop(attached: CdpBackend, layout: Any) -> None:
    shot = await attached.acapture(format="png")
    assert shot.size == layout.viewport
    x, y, w, h = layout.block
    assert shot.pixel(x + w // 2, y + h // 2) == layout.block_color
    await attached.aact(Event(kind=EventKind.MOVE, position=Point(x=1, y=1)))


# -- input ----------------------------------------------------------------------------


def test_act_clicks_types_and_presses_keys(attached: CdpBackend, site: str, layout: Any) -> None:
    session = attached.session
    attached.run(session.navigate(f"{site}/form"))

    def js(expression: str) -> Any:
        return attached.run(session.evaluate(expression))

    bx, by = layout.button
    attached.act(Event(kind=EventKind.CLICK, position=Point(x=bx, y=by)))
    assert js("window.clicks") == 1
    attached.act(Event(kind=EventKind.DOUBLE_CLICK, position=Point(x=bx, y=by)))
    assert js("window.clicks") == 3
    assert js("window.doubles") == 1

    fx, fy = layout.field
    attached.act(Event(kind=EventKind.CLICK, position=Point(x=fx, y=fy)))
    assert js("document.activeElement.id") == "field"
    attached.act(Event(kind=EventKind.TYPE, text="hello world"))
    assert js("field.value") == "hello world"
    attached.act(Event(kind=EventKind.KEY, keys=["BackSpace"]))
    assert js("field.value") == "hello worl"
    attached.act(Event(kind=EventKind.KEY, keys=["Left"]))
    attached.act(Event(kind=EventKind.KEY, keys=["shift", "x"]))
    assert js("field.value") == "hello worXl"
    attached.act(Event(kind=EventKind.KEY, keys=["ctrl", "a"]))
    attached.act(Event(kind=EventKind.TYPE, text="replaced"))
    assert js("field.value") == "replaced"
    attached.act(Event(kind=EventKind.KEY, keys=["Return"]))
    assert js("window.submitted") == "replaced"
    assert "Enter" in js("window.keys")
    attached.act(Event(kind=EventKind.KEY, keys=["Tab"]))
    assert js("document.activeElement.id") != "field"


def test_act_scrolls_with_the_wheel(attached: CdpBackend, site: str) -> None:
    session = attached.session
    attached.run(session.navigate(f"{site}/tall"))
    attached.act(Event(kind=EventKind.SCROLL, position=Point(x=200, y=200), scroll_dy=3))
    wait_until(lambda: attached.run(session.evaluate("scrollY")) >= 300, "the page to scroll")


def test_act_drags(attached: CdpBackend, site: str) -> None:
    session = attached.session
    attached.run(session.navigate(f"{site}/block"))
    attached.run(
        session.evaluate(
            "window.trail = []; for (const t of ['mousedown', 'mousemove', 'mouseup'])"
            " addEventListener(t, (e) => trail.push([e.type, e.clientX, e.clientY, e.buttons]))"
        )
    )
    attached.act(
        Event(kind=EventKind.DRAG, start_position=Point(x=10, y=10), position=Point(x=110, y=60))
    )
    trail = attached.run(session.evaluate("trail"))
    assert trail[0][0] in ("mousemove", "mousedown")
    downs = [entry for entry in trail if entry[0] == "mousedown"]
    ups = [entry for entry in trail if entry[0] == "mouseup"]
    assert downs[0][1:3] == [10, 10]
    assert ups[-1][1:3] == [110, 60]
    assert any(entry[0] == "mousemove" and entry[3] == 1 for entry in trail)


# -- lifetime -------------------------------------------------------------------------


def test_a_launched_browser_starts_lazily_and_close_stops_it(site: str) -> None:
    backend = CdpBackend(url=f"{site}/block", width=320, height=240)
    assert backend.browser is None
    assert backend.screen_size() == (320, 240)
    shot = backend.capture()
    assert shot.size == (320, 240)
    launched = backend.browser
    assert launched is not None and launched.running
    root = str(launched.root)
    backend.close()
    assert not launched.running
    assert not list(processes_mentioning(root))
    backend.close()  # twice is fine


def test_closing_an_attached_backend_leaves_the_browser_running(
    browser: ChromiumProcess, site: str
) -> None:
    backend = CdpBackend(url=f"{site}/block", cdp_url=browser.http_url)
    target_id = backend.session.target_id
    connection = backend.connection
    backend.close()
    assert connection.closed
    assert browser.running
    with CdpBackend(cdp_url=browser.http_url) as other:
        targets = other.run(other.connection.call("Target.getTargets"))
    assert target_id not in {t["targetId"] for t in targets["targetInfos"]}


def test_a_dead_attached_browser_fails_a_capture_instead_of_hanging(site: str) -> None:
    with launch_chromium(width=320, height=240) as doomed:
        backend = CdpBackend(
            url=f"{site}/block", cdp_url=doomed.http_url, width=320, height=240, timeout=300
        )
        backend.start()
        doomed.stop()
        # Closed (the reader saw the socket drop) or refused (a reconnect found nobody),
        # never a timeout.
        with pytest.raises((CDPConnectionClosedError, CDPConnectError)):
            backend.capture()
        backend.close()


# -- registration -----------------------------------------------------------------------


class _Collector:
    def __init__(self) -> None:
        self.shots: list[Screenshot] = []

    @hookimpl
    def viewfinder_screenshot_captured(self, screenshot: Screenshot, context: Any) -> None:
        if context.get("backend") == "cdp":
            self.shots.append(screenshot)


def test_registered_as_cdp_and_captures_through_core(
    browser: ChromiumProcess, site: str, viewfinder_plugin: Any, layout: Any
) -> None:
    spec = core.backend_specs()["cdp"]
    assert spec.priority < 0  # picked only when asked for by name, never by default
    assert spec.factory is CdpBackend
    assert CdpBackend.supports_act
    collector = _Collector()
    viewfinder_plugin(collector, name="cdp-test-collector")
    shot = core.capture("cdp", url=f"{site}/block", cdp_url=browser.http_url, format="webp")
    assert shot.format == "webp"
    assert collector.shots == [shot]


def test_availability(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("VIEWFINDER_CHROMIUM", raising=False)
    monkeypatch.delenv("VIEWFINDER_CDP_URL", raising=False)
    missing = CdpBackend.availability()
    assert not missing
    assert "apt-get install chromium" in missing.reason
    assert CdpBackend.availability(cdp_url="http://127.0.0.1:9222")
    monkeypatch.setenv("VIEWFINDER_CDP_URL", "http://127.0.0.1:9222")
    assert CdpBackend.availability()
    monkeypatch.undo()
    assert CdpBackend.availability()


async def test_backend_closes_from_async_code() -> None:
    """close() inside a coroutine must not need the caller's thread to run a loop."""
    backend = CdpBackend(width=200, height=100)
    try:
        shot = await backend.acapture()
        assert (shot.width, shot.height) == (200, 100)
    finally:
        backend.close()
    assert backend._loop is None or not backend._loop.running
