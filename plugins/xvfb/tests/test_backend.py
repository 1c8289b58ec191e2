"""XvfbBackend: pixels of a viewfinder display, regions, windows, still frames, errors."""

from __future__ import annotations

import os
import signal
import threading

import pytest

import viewfinder.core
from viewfinder.core import (
    BackendUnavailableError,
    DisplayGoneError,
    Region,
    RegionError,
    WindowNotFoundError,
)
from viewfinder.xvfb import Display, WindowNotViewableError, XvfbBackend

RED = (220, 30, 40)
BLUE = (20, 60, 200)


@pytest.fixture
def backend(display: Display):
    with XvfbBackend(display) as opened:
        yield opened


@pytest.fixture
def red_window(display: Display, colour_window):
    """A 100x60 red window at (50, 40) on the module's display."""
    return colour_window(display.name, 50, 40, 100, 60, RED)


def _wait_for_colour(backend: XvfbBackend, wait_until, x: int, y: int, rgb) -> None:
    wait_until(lambda: backend.capture().pixel(x, y) == rgb, f"{rgb} at ({x}, {y})")


def test_full_capture_shows_the_window_where_it_is(backend, red_window, wait_until) -> None:
    _wait_for_colour(backend, wait_until, 50, 40, RED)
    shot = backend.capture()
    assert shot.source == "xvfb"
    assert shot.size == (640, 480)
    assert shot.region is None
    for x, y in ((50, 40), (149, 40), (50, 99), (149, 99), (100, 70)):
        assert shot.pixel(x, y) == RED
    for x, y in ((49, 40), (150, 40), (50, 39), (50, 100)):
        assert shot.pixel(x, y) != RED
    assert backend.grab_path == "shm"


def test_region_capture_reads_just_that_region(backend, red_window, wait_until) -> None:
    _wait_for_colour(backend, wait_until, 50, 40, RED)
    shot = backend.capture(region=Region(x=40, y=30, width=30, height=20))
    assert shot.size == (30, 20)
    assert shot.region == Region(x=40, y=30, width=30, height=20)
    assert shot.pixel(10, 10) == RED  # (50, 40) on the screen
    assert shot.pixel(9, 10) != RED
    assert shot.pixel(10, 9) != RED


def test_window_capture_is_the_window(backend, red_window, wait_until) -> None:
    _wait_for_colour(backend, wait_until, 50, 40, RED)
    shot = backend.capture(window=red_window.id)
    assert shot.size == (100, 60)
    assert shot.region == Region(x=50, y=40, width=100, height=60)
    colours = shot.to_pil().convert("RGB").getcolors()
    assert colours == [(100 * 60, RED)]


def test_window_partly_off_screen_is_clipped(display, backend, colour_window, wait_until):
    window = colour_window(display.name, 600, 450, 100, 100, BLUE)
    _wait_for_colour(backend, wait_until, 600, 450, BLUE)
    shot = backend.capture(window=window.id)
    assert shot.region == Region(x=600, y=450, width=40, height=30)
    assert shot.pixel(39, 29) == BLUE


def test_display_name_finds_our_display(display, red_window) -> None:
    with XvfbBackend(display.name) as by_name:
        assert by_name.grab_path == "shm"
        assert by_name.capture(window=red_window.id).pixel(0, 0) == RED


def test_a_still_screen_hands_back_the_previous_frame(display, colour_window, wait_until):
    window = colour_window(display.name, 400, 300, 50, 50, BLUE)
    with XvfbBackend(display) as still, XvfbBackend(display, still_frames=False) as fresh:
        _wait_for_colour(still, wait_until, 400, 300, BLUE)
        first, again = still.capture(), still.capture()
        assert again.data is first.data  # not encoded again
        assert fresh.capture().data is not fresh.capture().data
        # another region or format is encoded on its own
        part = still.capture(region=Region(x=400, y=300, width=10, height=10))
        assert part.size == (10, 10) and part.pixel(0, 0) == BLUE
        assert still.capture(format="jpeg").format == "jpeg"
        # any change on the screen is a new frame
        window.fill(RED)
        _wait_for_colour(still, wait_until, 400, 300, RED)
        changed = still.capture()
        assert changed.data != first.data
        assert changed.pixel(449, 349) == RED and first.pixel(449, 349) == BLUE


def test_region_outside_the_screen_is_a_region_error(backend) -> None:
    with pytest.raises(RegionError, match="640x480"):
        backend.capture(region=Region(x=600, y=0, width=100, height=10))


def test_unknown_window_id_names_id_display_and_xwininfo(display, backend) -> None:
    with pytest.raises(WindowNotFoundError) as caught:
        backend.capture(window=0x7FFFFF)
    message = str(caught.value)
    assert "0x7fffff" in message
    assert display.name in message
    assert "xwininfo -root -tree" in message


def test_unmapped_window_is_a_clear_error(display, backend, colour_window) -> None:
    window = colour_window(display.name, 10, 10, 20, 20, RED, mapped=False)
    with pytest.raises(WindowNotViewableError, match="unmapped"):
        backend.capture(window=window.id)


def test_screen_size_and_jpeg(backend) -> None:
    assert backend.screen_size() == (640, 480)
    shot = backend.capture(format="jpeg", quality=70)
    assert shot.format == "jpeg" and shot.size == (640, 480)


def test_captures_from_several_threads(backend, red_window, wait_until) -> None:
    _wait_for_colour(backend, wait_until, 50, 40, RED)
    results: list[tuple[int, int, int]] = []
    errors: list[BaseException] = []

    def capture_some() -> None:
        try:
            for _ in range(5):
                results.append(backend.capture(window=red_window.id).pixel(5, 5))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=capture_some) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert results == [RED] * 20


def test_killed_display_raises_display_gone(wait_until) -> None:
    display = Display(200, 100).start()
    try:
        backend = XvfbBackend(display)
        backend.capture()
        assert display.pid is not None
        os.kill(display.pid, signal.SIGKILL)
        wait_until(lambda: not display.is_alive(), "Xvfb to die")
        with pytest.raises(DisplayGoneError, match="exited"):
            backend.capture()
        with pytest.raises(DisplayGoneError):
            backend.screen_size()
        backend.close()
    finally:
        display.stop()


def test_display_that_is_not_there_raises_display_gone() -> None:
    with Display(200, 100) as display:
        name = display.name
    with XvfbBackend(name) as backend, pytest.raises(DisplayGoneError):
        backend.capture()


def test_availability_says_what_to_do(monkeypatch: pytest.MonkeyPatch, display) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    verdict = XvfbBackend.availability()
    assert not verdict
    assert "viewfinder display start" in verdict.reason
    assert XvfbBackend.availability(display=display)
    with Display(200, 100) as gone:
        name = gone.name
    verdict = XvfbBackend.availability(display=name)
    assert not verdict and name in verdict.reason and "not running" in verdict.reason
    with pytest.raises(BackendUnavailableError):
        XvfbBackend()
    monkeypatch.setenv("DISPLAY", display.name)
    assert XvfbBackend.availability()


def test_registered_as_the_xvfb_plugin_backend(display, red_window) -> None:
    spec = viewfinder.core.backend_specs()["xvfb"]
    assert spec.priority == 100
    shot = viewfinder.core.capture("xvfb", display=display, window=red_window.id)
    assert shot.pixel(0, 0) == RED
