"""The pairing rules, driven through the programmatic API.

The screen here is core's in-memory canvas backend: these tests are about the logic
around capture (which frame each event gets, how bursts and clicks combine). The real
display and real input are exercised in test_x11_end_to_end.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from viewfinder.core import ElementAnchor, Event, EventKind, Point, Region
from viewfinder.core.testing import Canvas
from viewfinder.recorder import PairingSettings, Recorder

WHOLE = Region(x=0, y=0, width=640, height=480)


def lines(folder: Path) -> list[dict[str, Any]]:
    path = folder / "manifest.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def colour_of(path: Path) -> tuple[int, int, int]:
    with Image.open(path) as image:
        value = image.convert("RGB").getpixel((5, 5))
    assert isinstance(value, tuple)
    return (int(value[0]), int(value[1]), int(value[2]))


@pytest.fixture
def session(tmp_path: Path, canvas_backend: Canvas) -> Iterator[tuple[Recorder, Canvas, Path]]:
    folder = tmp_path / "session"
    recorder = Recorder(
        folder,
        "canvas",
        interval=0.05,
        settings=PairingSettings(typing_pause=60, scroll_pause=60, double_click_interval=0.4),
    )
    with recorder:
        yield recorder, canvas_backend, folder


@pytest.fixture
def paint(wait_until: Callable[..., Any]) -> Callable[[Recorder, Canvas, str], float]:
    """Fill the canvas and wait until the live frame shows it; returns a time before that."""

    def fill(recorder: Recorder, canvas: Canvas, colour: str) -> float:
        before = time.monotonic()
        canvas.fill(WHOLE, colour)
        recorder.frames.refresh()
        expected = Image.new("RGB", (1, 1), colour).getpixel((0, 0))
        wait_until(lambda: colour_of(recorder.layout.current) == expected, f"a {colour} frame")
        return before

    return fill


RED, GREEN, BLUE = (255, 0, 0), (0, 128, 0), (0, 0, 255)


def test_a_click_freezes_the_frame_from_before_it_and_the_first_is_0_png(session, paint):
    recorder, canvas, folder = session
    paint(recorder, canvas, "red")
    recorder.click(10, 20)
    paint(recorder, canvas, "green")
    recorder.right_click(30, 40)
    assert [(line["seq"], line["kind"], line["screenshot"]) for line in lines(folder)] == [
        (0, "click", "screenshots/0.png"),
        (1, "right_click", "screenshots/1.png"),
    ]
    assert colour_of(folder / "screenshots/0.png") == RED
    assert colour_of(folder / "screenshots/1.png") == GREEN
    # Frozen by copying: the live frame is still there.
    assert (folder / "screenshots/current_screenshot.png").exists()


def test_typing_is_one_event_with_the_frame_from_before_the_first_character(session, paint):
    recorder, canvas, folder = session
    paint(recorder, canvas, "red")
    recorder.type("hel")
    assert recorder.pending == "type"
    assert colour_of(folder / "screenshots/pretyping_screenshot.png") == RED
    paint(recorder, canvas, "green")  # the text appearing on screen
    recorder.type("lo")
    recorder.key("Return")
    assert [(line["kind"], line.get("text"), line.get("keys")) for line in lines(folder)] == [
        ("type", "hello", None),
        ("key", None, ["Return"]),
    ]
    assert colour_of(folder / "screenshots/0.png") == RED
    assert colour_of(folder / "screenshots/1.png") == GREEN


def test_backspace_edits_the_burst_and_is_a_key_outside_one(session):
    recorder, _, folder = session
    recorder.type("hellp")
    recorder.key("BackSpace")
    recorder.type("o world\b\b\b\b\b\b")  # \b is BackSpace too: back to "hello"
    recorder.key("Tab")
    recorder.key("BackSpace")  # no burst: it deletes text already there
    recorder.type("x")
    recorder.key("backspace")  # empties the burst: nothing typed in the end
    recorder.key("BackSpace")
    recorder.flush()
    assert [(line["kind"], line.get("text") or line.get("keys")) for line in lines(folder)] == [
        ("type", "hello"),
        ("key", ["Tab"]),
        ("key", ["BackSpace"]),
        ("key", ["BackSpace"]),
    ]


def test_space_is_typing_hotkeys_and_named_keys_end_the_burst(session):
    recorder, _, folder = session
    recorder.type("a b")
    recorder.key("space")
    recorder.key("shift+c")
    recorder.key("ctrl+s")
    recorder.type("x")
    recorder.key("ctrl+S")
    recorder.key("alt+Tab")
    recorder.type("y\n")
    recorder.key("Delete")
    recorder.key("esc")
    recorder.key("Up")
    assert [(line["kind"], line.get("text") or line.get("keys")) for line in lines(folder)] == [
        ("type", "a b C"),
        ("key", ["ctrl", "s"]),
        ("type", "x"),
        ("key", ["ctrl", "shift", "s"]),
        ("key", ["alt", "Tab"]),
        ("type", "y"),
        ("key", ["Return"]),
        ("key", ["Delete"]),
        ("key", ["Escape"]),
        ("key", ["Up"]),
    ]


def test_a_burst_ends_after_a_pause_and_on_stop(tmp_path, canvas_backend, wait_until):
    folder = tmp_path / "session"
    with Recorder(folder, "canvas", settings=PairingSettings(typing_pause=0.2)) as recorder:
        recorder.type("quick")
        wait_until(lambda: len(lines(folder)) == 1, "the paused burst to be written")
        recorder.type("left pending")
    assert [line.get("text") for line in lines(folder)] == ["quick", "left pending"]


def test_scrolls_in_a_row_coalesce_into_one_event(session):
    recorder, _, folder = session
    for _ in range(3):
        recorder.scroll(100, 100, dy=1)
    recorder.scroll(102, 101, dy=2)  # a few pixels off is the same place
    recorder.scroll(102, 101, dy=-1)  # the other way: a new scroll
    recorder.scroll(400, 300, dx=1)  # somewhere else: a new scroll
    recorder.button_pressed(400, 300, 7)  # X wheel-right joins it
    recorder.button_pressed(400, 300, 4)  # X wheel-up: vertical now, and a new direction
    recorder.flush()
    assert [
        (line["position"], line.get("scroll_dx", 0), line.get("scroll_dy", 0))
        for line in lines(folder)
    ] == [
        ({"x": 100, "y": 100}, 0, 5),
        ({"x": 102, "y": 101}, 0, -1),
        ({"x": 400, "y": 300}, 2, -1),
    ]


def test_presses_close_in_time_and_place_are_one_double_or_triple_click(session):
    recorder, _, folder = session
    t = time.monotonic()
    recorder.button_pressed(50, 50, 1, at=t)
    recorder.button_pressed(52, 51, 1, at=t + 0.15)  # a double click
    recorder.button_pressed(200, 50, 1, at=t + 1.0)
    recorder.button_pressed(200, 50, 1, at=t + 1.1)
    recorder.button_pressed(201, 50, 1, at=t + 1.2)  # a triple click
    recorder.button_pressed(300, 50, 1, at=t + 2.0)
    recorder.button_pressed(300, 50, 1, at=t + 2.9)  # too slow: two clicks
    recorder.button_pressed(400, 50, 1, at=t + 4.0)
    recorder.button_pressed(440, 50, 1, at=t + 4.1)  # too far: two clicks
    recorder.button_pressed(500, 50, "right", ["ctrl"], at=t + 5.0)
    recorder.button_pressed(500, 50, 2, at=t + 5.1)
    recorder.button_pressed(500, 50, 9, at=t + 5.2)  # "forward": not an action
    recorder.flush()
    assert [(line["kind"], line["position"]["x"]) for line in lines(folder)] == [
        ("double_click", 50),
        ("triple_click", 200),
        ("click", 300),
        ("click", 300),
        ("click", 400),
        ("click", 440),
        ("right_click", 500),
        ("middle_click", 500),
    ]
    assert lines(folder)[6]["modifiers"] == ["ctrl"]


def test_a_single_press_is_written_once_the_double_click_time_has_passed(session, wait_until):
    recorder, _, folder = session
    recorder.button_pressed(10, 10, 1)
    assert recorder.pending == "click"
    wait_until(lambda: len(lines(folder)) == 1, "the click to be written")
    assert lines(folder)[0]["kind"] == "click"


def test_an_action_gets_the_frame_captured_before_it_even_if_a_newer_one_exists(session, paint):
    recorder, canvas, folder = session
    paint(recorder, canvas, "red")
    between = paint(recorder, canvas, "blue")  # an instant before the blue frame
    # An input that reached us late: it happened before the blue frame was captured.
    recorder.click(1, 1, at=between)
    recorder.key("F5")
    assert colour_of(folder / "screenshots/0.png") == RED
    assert colour_of(folder / "screenshots/1.png") == BLUE
    when = [line["timestamp"] for line in lines(folder)]
    assert when[0] < when[1]


def test_record_and_on_event_see_every_event_and_a_failing_watcher_is_ignored(
    tmp_path, canvas_backend
):
    from viewfinder.core import Event, EventKind, Point

    seen: list[tuple[int, str]] = []

    def watcher(seq: int, event: Event) -> None:
        seen.append((seq, event.kind.value))
        raise RuntimeError("a broken watcher")

    folder = tmp_path / "session"
    with Recorder(folder, "canvas", on_event=watcher) as recorder:
        recorder.record(
            Event(kind=EventKind.DRAG, start_position=Point(x=1, y=1), position=Point(x=9, y=9))
        )
        recorder.record(Event(kind=EventKind.TYPE, text="hi"))
        recorder.record(Event(kind=EventKind.KEY, keys=["ctrl", "a"]))
        recorder.record(Event(kind=EventKind.SCROLL, position=Point(x=5, y=5), scroll_dy=2))
        recorder.double_click(3, 3)
    assert seen == [(0, "drag"), (1, "type"), (2, "key"), (3, "scroll"), (4, "double_click")]
    assert [line["kind"] for line in lines(folder)] == [kind for _, kind in seen]


def test_thin_path_keeps_the_ends_and_the_turns() -> None:
    from viewfinder.recorder.pairing import thin_path

    straight = [(x, 2 * x, x / 100) for x in range(0, 50, 5)]
    assert thin_path(straight, 2.0) == [straight[0], straight[-1]]
    corner = [(0, 0, 0.0), (10, 0, 0.1), (20, 0, 0.2), (20, 10, 0.3), (20, 20, 0.4)]
    assert [point[:2] for point in thin_path(corner, 2.0)] == [(0, 0), (20, 0), (20, 20)]


def test_a_press_that_moves_before_its_release_is_one_drag_a_still_one_a_click(
    tmp_path, canvas_backend
):
    class Releases:
        name = "releases"
        reports_releases = True

        def start(self, sink):
            self.sink = sink

        def stop(self):
            pass

    source = Releases()
    with Recorder(tmp_path / "s", "canvas", input_source=source) as recorder:
        sink = source.sink
        sink.button_pressed(10, 10, 1, at=1.0)
        for step in range(1, 6):
            sink.pointer_moved(10 + step * 10, 10 + step * 4, at=1.0 + step / 10)
        sink.button_released(60, 30, 1, at=1.6)
        sink.button_pressed(200, 200, 1, at=3.0)
        sink.button_released(201, 200, 1, at=3.1)
        recorder.flush()
    drag, click = [
        json.loads(line) for line in (tmp_path / "s/manifest.jsonl").read_text().splitlines()
    ]
    assert drag["kind"] == "drag" and drag["duration_s"] == 0.6
    assert (drag["start_position"], drag["position"]) == ({"x": 10, "y": 10}, {"x": 60, "y": 30})
    assert [point[:2] for point in drag["path"]] == [[10, 10], [60, 30]]
    assert click["kind"] == "click" and click["position"] == {"x": 200, "y": 200}


def test_each_pointer_action_looks_its_element_up_once_where_it_began(session):
    # The logic around the lookup (the real one, on a GTK form, is test_elements.py):
    # a lookup that names every point it is asked about, by the instant of the press.
    recorder, _, folder = session
    asked: list[tuple[int, int]] = []
    instants: list[float] = []

    def lookup(x: int, y: int, at: float) -> ElementAnchor:
        asked.append((x, y))
        instants.append(at)
        return ElementAnchor(role="push button", name=f"at {x},{y}")

    assert recorder.element_source is None  # the canvas is no X display: nothing to ask
    recorder._active().pairing.elements = lookup
    t = time.monotonic()
    recorder.button_pressed(50, 50, 1, at=t)
    recorder.button_pressed(52, 51, 1, at=t + 0.15)  # the same double click: not asked
    recorder.button_pressed(100, 100, 5, at=t + 1.0)
    recorder.button_pressed(101, 100, 5, at=t + 1.1)  # the same scroll burst: not asked
    recorder.key("Return", at=t + 2.0)
    recorder.type("hi", at=t + 2.1)
    recorder.button_pressed(300, 40, "right", at=t + 3.0)
    recorder.record(Event(kind=EventKind.MOVE, position=Point(x=1, y=2)), at=t + 3.5)
    given = ElementAnchor(role="link", name="kept")
    recorder.record(Event(kind=EventKind.CLICK, position=Point(x=9, y=9), element=given))
    recorder.flush()
    assert asked == [(50, 50), (100, 100), (300, 40)]
    assert instants == [t, t + 1.0, t + 3.0]  # each press's own instant, not when it came
    named = [(line["kind"], line.get("element", {}).get("name")) for line in lines(folder)]
    assert named == [
        ("double_click", "at 50,50"),
        ("scroll", "at 100,100"),
        ("key", None),
        ("type", None),
        ("right_click", "at 300,40"),
        ("move", None),
        ("click", "kept"),
    ]
