"""The viewer in a real Chromium: what a person sees and where they click.

A session recorded with real X input on a Tk board (xdotool through XTest, the X11
listener) is shown step by step; the click marker of a step must sit on the pixel that
was clicked, read from the page's own geometry and from a screenshot of the page.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.viewer import ViewerServer
from viewfinder.xvfb import Display

from .conftest import RecordedSession, open_page

#: Where the page's screenshots go when VIEWFINDER_VIEWER_SHOTS names a folder (docs).
SHOTS = os.environ.get("VIEWFINDER_VIEWER_SHOTS")


def shoot(page: Any, name: str) -> None:
    """A screenshot of the page for the docs, in few colours (a small PNG)."""
    if SHOTS:
        shot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
        small = shot.quantize(colors=192, method=Image.Quantize.FASTOCTREE)
        small.save(Path(SHOTS) / f"{name}.png", optimize=True)


def marker_on_screen(page: Any) -> tuple[float, float]:
    """Where the page draws the marker's centre, in the frame's own pixels."""
    geometry = page.evaluate(
        """() => {
            const image = document.getElementById("frame");
            const box = image.getBoundingClientRect();
            const dot = document.querySelector("svg.overlay .marker .centre");
            const centre = dot.getBoundingClientRect();
            return {left: box.left, top: box.top, width: box.width, height: box.height,
                    naturalWidth: image.naturalWidth, naturalHeight: image.naturalHeight,
                    cx: centre.left + centre.width / 2, cy: centre.top + centre.height / 2};
        }"""
    )
    scale_x = geometry["naturalWidth"] / geometry["width"]
    scale_y = geometry["naturalHeight"] / geometry["height"]
    return (
        (geometry["cx"] - geometry["left"]) * scale_x,
        (geometry["cy"] - geometry["top"]) * scale_y,
    )


def test_a_recorded_session_shows_every_step_with_its_action_on_the_clicked_pixel(
    recorded: RecordedSession, serve: Callable[..., ViewerServer], page: Any
) -> None:
    viewer = serve(root=recorded.folder.parent)
    open_page(page, f"{viewer.url}/?a=session")
    lines = recorded.lines
    assert [line["kind"] for line in lines] == [
        "click", "click", "type", "key", "scroll", "double_click", "right_click", "drag",
    ]  # fmt: skip
    items = page.locator("#steps .step")
    assert items.count() == len(lines)
    for index, line in enumerate(lines):
        label = items.nth(index).locator(".label").inner_text()
        assert label.startswith(line["kind"].replace("_", " ")), (index, label)
    page.wait_for_selector("svg.overlay .marker")

    for index in (0, 5, 6):  # a click, a double click, a right click
        page.goto(f"{viewer.url}/?a=session#step-{index}")
        page.wait_for_selector(f"#step-item-{index}[aria-current]")
        page.wait_for_function("document.getElementById('frame')?.complete")
        page.wait_for_selector(f"svg.overlay .marker.{lines[index]['kind']}")
        x, y = marker_on_screen(page)
        wanted = lines[index]["position"]
        assert abs(x - wanted["x"]) <= 1 and abs(y - wanted["y"]) <= 1, (index, x, y, wanted)
        # and the page's own pixels: the marker's centre dot is drawn there
        centre = page.locator("svg.overlay .marker .centre").bounding_box()
        shot = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
        seen = shot.getpixel((round(centre["x"] + centre["width"] / 2),
                              round(centre["y"] + centre["height"] / 2)))  # fmt: skip
        assert isinstance(seen, tuple)
        colour = {"click": (229, 57, 53), "double_click": (229, 57, 53),
                  "right_click": (30, 99, 214)}[lines[index]["kind"]]  # fmt: skip
        assert all(abs(a - b) <= 40 for a, b in zip(seen, colour, strict=True)), (index, seen)
    assert page.locator("svg.overlay .marker.right_click .label").text_content() == "right"

    # → moves to the next step; Home and End to the ends; the hash follows
    page.locator("body").press("ArrowRight")
    page.wait_for_selector("#step-item-7[aria-current]")
    assert page.evaluate("location.hash") == "#step-7"
    assert page.locator("#step-title .action").inner_text().startswith("drag")
    # the overlay is drawn once the step's frame has loaded, a moment after the title
    page.wait_for_selector("svg.overlay .marker.drag polyline")
    assert page.locator("svg.overlay .marker.drag polyline").count() == 1
    shoot(page, "viewer-step")
    page.locator("body").press("Home")
    page.wait_for_selector("#step-item-0[aria-current]")
    page.locator("body").press("ArrowRight")
    page.wait_for_selector("#step-item-1[aria-current]")
    page.locator("body").press("ArrowRight")
    page.wait_for_selector("#step-item-2[aria-current]")
    page.wait_for_selector("svg.overlay .marker.type")
    assert page.locator(".step-facts .typed").inner_text() == "hello"
    assert "hello" in (page.locator("svg.overlay .marker.type").text_content() or "")
    page.locator("body").press("End")
    page.wait_for_selector("#step-item-7[aria-current]")
    page.locator("body").press("ArrowLeft")
    page.wait_for_selector("#step-item-6[aria-current]")
    # the step's result is the next frame, and the frame can be downloaded
    assert "step=6&which=after&v=" in (page.locator("#after-frame").get_attribute("src") or "")
    assert page.locator("a.download").get_attribute("download") == "step-6.png"


def test_a_failed_cache_check_shows_the_failing_step_coloured_with_its_distance(
    recorded: RecordedSession,
    serve: Callable[..., ViewerServer],
    page: Any,
    display: Display,
    start_board: Callable[..., Any],
    wait_until: Callable[..., Any],
) -> None:
    from viewfinder.cache import (
        CacheExecutor,
        ExecutionSettings,
        HealRecord,
        RecordingSettings,
        ReplayStatus,
        build_cache,
        read_cache_file,
        save_cache_file,
    )
    from viewfinder.xvfb import XvfbBackend

    root = recorded.folder.parent
    cache_file = root / "board.json"
    save_cache_file(
        build_cache(recorded.folder, RecordingSettings(debug_thumbnails=True)), cache_file
    )
    # a later version of the app: everything 70 px to the right
    recorded.board.stop()
    start_board(offset=70)
    with XvfbBackend(display=display.name) as screen:
        wait_until(
            lambda: (
                screen.capture().pixel(30, 30) == (0, 0, 0)
                and screen.capture().pixel(150, 120) == (255, 255, 255)
            ),
            "the moved board on the screen",
        )
        replay = CacheExecutor(screen, ExecutionSettings(settle_time=0.1, heal=False)).run(
            cache_file
        )
    assert replay.status is ReplayStatus.NEEDS_AGENT and replay.step_index == 0
    # an earlier replay healed step 0: the file's history says so
    healed = read_cache_file(cache_file)
    healed.metadata.heals.append(
        HealRecord.model_validate(
            {"timestamp": "2026-11-27T02:10:00Z", "step_index": 0,
             "method": "template", "from": [40, 40], "to": [110, 40],
             "shift": [70, 0], "score": 0.998}
        )
    )  # fmt: skip
    save_cache_file(healed, cache_file)

    viewer = serve(root=root, screen=display.name)
    open_page(page, f"{viewer.url}/?a=board.json")
    failing = page.locator("#step-item-0")
    assert "check-failed" in (failing.get_attribute("class") or "")
    distance = failing.locator(".distance").inner_text()
    assert distance.startswith("distance ") and "> 10" in distance, distance
    assert int(distance.split()[1]) > 10
    background = failing.evaluate("node => getComputedStyle(node).backgroundColor")
    assert background == "rgb(253, 236, 236)"  # the failed step's red wash
    panel = page.locator("section.check")
    assert "a replay stops here" in panel.locator("h3").inner_text()
    assert panel.locator("img").count() == 2  # the recorded region beside the screen's
    assert "the last replay stopped here" in panel.inner_text()
    assert (
        "step 0 by template (score 0.998): (40, 40) -> (110, 40), shift (+70, +0)"
        in panel.inner_text()
    )
    banners = page.locator("#banners").inner_text()
    assert "the last failed replay stopped at step 0" in banners
    # a later hashed step differs too, as it should: it is not the failing one
    later = page.locator(".step.check-later, .step.check-passed")
    assert later.count() >= 1
    shoot(page, "viewer-cache")


def test_bad_input_shows_a_banner_and_what_could_be_read(
    recorded: RecordedSession,
    serve: Callable[..., ViewerServer],
    page: Any,
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not an artifact")
    viewer = serve(root=notes)
    open_page(page, viewer.url)
    assert "is none of what the viewer shows" in page.locator("#banners").inner_text()

    damaged = tmp_path / "damaged"
    shutil.copytree(recorded.folder, damaged)
    (damaged / "screenshots" / "3.png").unlink()
    lines = (damaged / "manifest.jsonl").read_text().splitlines()
    lines[5] = '{"seq": 5, "kind": "click", "posit'  # a damaged line in the middle
    (damaged / "manifest.jsonl").write_text("\n".join(lines) + '\n{"seq": 8, "kind"')
    viewer = serve(root=damaged)
    open_page(page, viewer.url)
    said = page.locator("#banners").inner_text()
    assert "line 6 cannot be read" in said
    assert "ends in a torn line" in said
    assert "1 step(s) have no frame to show (steps 3)" in said
    assert page.locator("#steps .step").count() == 7  # every line that could be read
    page.goto(f"{viewer.url}/#step-3")
    page.wait_for_selector("#step-item-3[aria-current]")
    assert "frame screenshots/3.png is missing" in page.locator(".no-frame").first.inner_text()
    shoot(page, "viewer-bad-input")

    truncated = tmp_path / "truncated.json"
    whole = json.loads((recorded.folder.parent / "board.json").read_text())
    text = json.dumps(whole, indent=1)
    truncated.write_text(text[: text.index('"tool_use"', text.index('"toolu_', 2000))])
    viewer = serve(root=truncated)
    open_page(page, viewer.url)
    said = page.locator("#banners").inner_text()
    assert "looks truncated" in said and "read what comes before the damage" in said
    assert page.locator("#steps .step").count() >= 1
    # the server keeps serving after all of it
    open_page(page, viewer.url)
    assert page.locator("#steps .step").count() >= 1


class RootPainter:
    """Paints the display's root window through its own X connection: the instant of a
    draw is known to the microsecond (no program to start in between)."""

    def __init__(self, display: Display) -> None:
        from Xlib.display import Display as XDisplay

        self.conn = XDisplay(display.name)
        self.root = self.conn.screen().root

    def paint(self, rgb: tuple[int, int, int]) -> float:
        """Paint the root ``rgb``; the time it was drawn, in ms since the epoch."""
        red, green, blue = rgb
        self.root.change_attributes(background_pixel=(red << 16) | (green << 8) | blue)
        self.root.clear_area(0, 0, 0, 0)
        self.conn.sync()
        return time.time() * 1000

    def close(self) -> None:
        self.conn.close()


def live_page(page: Any, viewer: ViewerServer, display: Display) -> None:
    open_page(page, f"{viewer.url}/?live={display.name}")
    page.wait_for_function("window.viewfinderLive && window.viewfinderLive.frames > 0")


def test_the_live_view_shows_a_colour_drawn_on_the_display_within_300_ms(
    display: Display,
    serve: Callable[..., ViewerServer],
    page: Any,
    record_property: Callable[[str, object], None],
) -> None:
    viewer = serve(live=(display.name,))
    painter = RootPainter(display)
    try:
        painter.paint((0, 0, 0))
        live_page(page, viewer, display)
        assert page.locator(".mode").inner_text() == "read-only"
        latencies = []
        colours = [
            (255, 0, 0),
            (0, 160, 0),
            (0, 0, 255),
            (255, 255, 0),
            (255, 0, 255),
            (0, 200, 200),
        ]
        for colour in colours:
            page.evaluate("([rgb]) => window.viewfinderLive.watch(790, 590, rgb, 40)", [colour])
            drawn = painter.paint(colour)
            # a bounded wait; the time is the page's own, taken when it drew the frame
            page.wait_for_function("window.viewfinderLive.watched.seenAt !== null", timeout=5000)
            latencies.append(page.evaluate("window.viewfinderLive.watched.seenAt") - drawn)
            time.sleep(0.1)
    finally:
        painter.close()
    latencies.sort()
    median = latencies[len(latencies) // 2]
    record_property("live_latency_ms", [round(value, 1) for value in latencies])
    print(f"draw to page, ms: {[round(value, 1) for value in latencies]} (median {median:.1f})")
    assert median <= 300, f"the live view took {latencies} ms to show a change"

    # a still screen costs no grabs: the feed waits for the X server to report a repaint
    (feed,) = viewer.server.config.app.state.feeds.feeds()  # type: ignore[attr-defined]
    assert feed.damage_driven
    before = feed.grabs
    time.sleep(1.0)
    assert feed.grabs - before <= 1, "the live view grabbed a still screen"
    shoot(page, "viewer-live")


def test_control_clicks_and_keys_in_the_page_reach_a_tk_app(
    display: Display,
    start_board: Callable[[], Any],
    serve: Callable[..., ViewerServer],
    page: Any,
) -> None:
    board = start_board()
    viewer = serve(live=(display.name,), control=True)
    live_page(page, viewer, display)
    assert page.locator(".mode").inner_text().startswith("control")
    box = page.locator("canvas.live-canvas").bounding_box()

    def click(name: str) -> None:
        x, y = board.centre(name)
        page.mouse.click(box["x"] + x * box["width"] / 800, box["y"] + y * box["height"] / 600)

    patch_x, patch_y = board.centre("patch")
    page.evaluate(f"window.viewfinderLive.watch({patch_x}, {patch_y}, [0, 0, 255], 30)")
    click("button")
    board.said(lambda line: line == "clicked paint", "the click from the page on Paint")
    page.wait_for_function("window.viewfinderLive.watched.seenAt !== null", timeout=5000)
    click("entry")
    page.keyboard.type("hi")
    board.said(lambda line: line == "entry hi", "the keys typed in the page")
    page.keyboard.press("Backspace")
    board.said(lambda line: line == "entry h", "BackSpace from the page")


def test_the_sessions_video_plays_beside_the_steps_at_each_steps_moment(
    recorded: RecordedSession, serve: Callable[..., ViewerServer], page: Any
) -> None:
    from datetime import datetime

    run = json.loads((recorded.folder / "metadata.json").read_text())["runs"][0]
    started = datetime.fromisoformat(run["video"]["started_at"])
    viewer = serve(root=recorded.folder)
    for index in (1, 4):
        page.goto(f"{viewer.url}/#step-{index}")
        page.wait_for_selector(f"#step-item-{index}[aria-current]")
        player = page.locator("section.videos video")
        moment = datetime.fromisoformat(recorded.lines[index]["timestamp"])
        expected = (moment - started).total_seconds()
        assert abs(float(player.get_attribute("data-seek-to") or "nan") - expected) < 0.002
        page.wait_for_function(
            "document.querySelector('section.videos video').readyState >= 1"
            " && !document.querySelector('section.videos video').seeking"
        )
        played = page.evaluate(
            "(() => { const v = document.querySelector('section.videos video');"
            " return [v.currentTime, v.duration, v.videoWidth]; })()"
        )
        assert abs(played[0] - expected) < 0.05, played
        assert played[1] > 2.5 and played[2] == 800  # Chromium decoded the H.264 stream
    assert "at " in page.locator(".seek-note").inner_text()


def write_long_session(folder: Path, steps: int) -> None:
    """A session of ``steps`` clicks on 1280x800 frames (eight pictures, each in many files)."""
    from datetime import UTC, datetime, timedelta

    from viewfinder.core import Event, EventKind, Point, ScreenSize
    from viewfinder.recorder import SessionMetadata

    (folder / "screenshots").mkdir(parents=True)
    started = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    SessionMetadata(
        screen=ScreenSize(width=1280, height=800), backend="xvfb", input_source="x11",
        interval_s=0.5, started_at=started, status="stopped",
    ).save(folder / "metadata.json")  # fmt: skip
    lines = []
    pictures = []
    for shade in range(8):
        out = io.BytesIO()
        Image.new("RGB", (1280, 800), (shade * 30, 120, 90)).save(out, "PNG")
        pictures.append(out.getvalue())
    for seq in range(steps):
        (folder / "screenshots" / f"{seq}.png").write_bytes(pictures[seq % 8])
        event = Event(
            kind=EventKind.CLICK,
            position=Point(x=(seq * 37) % 1280, y=(seq * 53) % 800),
            timestamp=started + timedelta(seconds=seq * 0.5),
            screenshot=f"screenshots/{seq}.png",
        )
        lines.append(json.dumps(event.to_manifest(seq)))
    (folder / "manifest.jsonl").write_text("".join(line + "\n" for line in lines))


def test_a_thousand_step_session_opens_with_a_page_of_steps_and_the_rows_in_view(
    tmp_path: Path, serve: Callable[..., ViewerServer], page: Any,
    record_property: Callable[[str, object], None],
) -> None:  # fmt: skip
    folder = tmp_path / "long"
    write_long_session(folder, 1000)
    viewer = serve(root=folder)
    thumbs: list[str] = []
    pages: list[str] = []
    page.on(
        "request",
        lambda request: thumbs.append(request.url) if "size=thumb" in request.url else None,
    )
    page.on(
        "request",
        lambda request: pages.append(request.url) if "/api/artifact" in request.url else None,
    )
    started = time.perf_counter()
    page.goto(viewer.url)
    page.wait_for_function(
        "document.getElementById('frame')?.complete"
        " && document.getElementById('frame').naturalWidth > 0"
    )
    first_step_s = time.perf_counter() - started
    record_property("first_step_s", round(first_step_s, 3))
    print(
        f"1,000 steps: first step shown after {first_step_s:.2f} s, {len(thumbs)} thumbnails asked"
    )
    # one page of steps was asked for, and only the rows near the view are in the page
    assert len(pages) == 1 and "offset=0&limit=200" in pages[0]
    assert page.locator("nav.timeline").get_attribute("aria-label") == "1000 steps"
    rows = page.locator("#steps .step").count()
    assert 5 < rows < 60, rows
    page.wait_for_function("document.querySelector('#steps img.thumb')?.complete")
    assert 0 < len(thumbs) < 100, "the timeline asked for thumbnails it does not show"
    # the list is as tall as all its rows: scrolling far fetches that page and shows it
    page.evaluate("document.querySelector('nav.timeline').scrollTop = 730 * 73")
    page.wait_for_selector("#step-item-730")
    assert (
        page.locator("#step-item-730 .label").inner_text()
        == f"click ({730 * 37 % 1280}, {730 * 53 % 800})"
    )
    assert any("offset=600&limit=200" in url for url in pages)
    page.locator("body").press("End")
    page.wait_for_selector("#step-item-999[aria-current]")
    page.wait_for_function("document.getElementById('frame')?.complete")
    x, y = marker_on_screen(page)
    assert abs(x - (999 * 37) % 1280) <= 1 and abs(y - (999 * 53) % 800) <= 1
    # a deep link far down asks for its own page first
    pages.clear()
    page.goto(f"{viewer.url}/?a=.#step-750")
    page.wait_for_selector("#step-item-750[aria-current]")
    assert "offset=600&limit=200" in pages[0]
    page.wait_for_function("document.getElementById('frame')?.complete")
    x, y = marker_on_screen(page)
    assert abs(x - (750 * 37) % 1280) <= 1 and abs(y - (750 * 53) % 800) <= 1
