"""Capture on X displays that viewfinder did not start, and frames that are never torn.

Each display here is a plain ``Xvfb :N`` started by hand, as in a container or on a
user's machine. A local one is read through MIT-SHM; one reached over TCP, or one
without the extension, falls back to GetImage. Every path gives the same pixels, and a
window that repaints as fast as it can is never caught half-way.

python-xlib cannot connect to a server without MIT-SHM (its extension event table
breaks, for every later connection of the process too), so that display is only
touched through the grab itself (XCB) and ``xsetroot``.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.core import Region
from viewfinder.xvfb import Display, XvfbBackend
from viewfinder.xvfb.grab import ScreenGrab
from viewfinder.xvfb.testing import HandStartedXvfb

HERE = Path(__file__).parent
RED = (220, 30, 40)
BLUE = (20, 60, 200)
FLIP_COLOURS = {(255, 0, 0), (0, 0, 255)}
FLIP_SIZE = (600, 400)
CAPTURES = 200


@pytest.fixture(scope="module")
def hand_displays() -> Iterator[dict[str, HandStartedXvfb]]:
    started: dict[str, HandStartedXvfb] = {}
    try:
        started["shm"] = HandStartedXvfb()
        # -noreset: this Xvfb refuses connections for a while after its last client left
        started["no MIT-SHM extension"] = HandStartedXvfb(
            640, 480, "-extension", "MIT-SHM", "-noreset"
        )
        started["over TCP"] = HandStartedXvfb(tcp=True)
        yield started
    finally:
        for display in started.values():
            display.stop()


PATHS = {"shm": "shm", "over TCP": "getimage"}


@pytest.mark.parametrize("kind", list(PATHS))
def test_full_region_and_window_capture(kind, hand_displays, colour_window, wait_until) -> None:
    display = hand_displays[kind]
    window = colour_window(display.name, 50, 40, 100, 60, RED)
    colour_window(display.name, 300, 200, 80, 80, BLUE)
    with XvfbBackend(display.name) as backend:
        wait_until(lambda: backend.capture().pixel(300, 200) == BLUE, "the windows to show")
        assert backend.grab_path == PATHS[kind]
        shot = backend.capture()
        assert shot.size == (640, 480)
        assert shot.pixel(50, 40) == RED and shot.pixel(149, 99) == RED
        assert shot.pixel(49, 40) != RED and shot.pixel(150, 99) != RED
        assert shot.pixel(379, 279) == BLUE and shot.pixel(380, 280) != BLUE

        part = backend.capture(region=Region(x=290, y=190, width=20, height=20))
        assert part.size == (20, 20)
        assert part.pixel(10, 10) == BLUE and part.pixel(9, 9) != BLUE

        framed = backend.capture(window=window.id)
        assert framed.region == Region(x=50, y=40, width=100, height=60)
        assert framed.to_pil().convert("RGB").getcolors() == [(100 * 60, RED)]


def test_every_path_gives_the_same_pixels(hand_displays, colour_window, wait_until) -> None:
    shm, tcp = hand_displays["shm"], hand_displays["over TCP"]
    for display in (shm, tcp):
        colour_window(display.name, 10, 10, 200, 100, RED)
    with ScreenGrab(shm.name) as local, ScreenGrab(tcp.name) as remote:
        for grab in (local, remote):
            wait_until(lambda grab=grab: grab.image().getpixel((10, 10)) == RED, "the window")
        assert (local.path, remote.path) == ("shm", "getimage")
        for region in (None, Region(x=5, y=5, width=300, height=200)):
            assert local.image(region).tobytes() == remote.image(region).tobytes()


def test_a_server_without_the_extension_falls_back_and_says_why(hand_displays, wait_until):
    display = hand_displays["no MIT-SHM extension"]
    with ScreenGrab(display.name) as grab:
        # while a client is connected: the server resets the root when its last one leaves
        subprocess.run(["xsetroot", "-solid", "#1e3cc8"], env=display.env(), check=True)
        wait_until(lambda: grab.image().getpixel((0, 0)) == (30, 60, 200), "the root colour")
        assert grab.path == "getimage"
        assert "MIT-SHM" in (grab.fallback_reason or "")
        region = Region(x=600, y=440, width=40, height=40)
        assert grab.image(region).getcolors() == [(40 * 40, (30, 60, 200))]
    verdict = XvfbBackend.availability(display=display.name)
    assert verdict and "X GetImage" in verdict.reason and "MIT-SHM" in verdict.reason
    verdict = XvfbBackend.availability(display=hand_displays["shm"].name)
    assert verdict and "MIT-SHM" in verdict.reason and "X GetImage" not in verdict.reason


def _flipping_window(env: dict[str, str]) -> subprocess.Popen[str]:
    app = subprocess.Popen(
        [sys.executable, str(HERE / "flip_app.py"), *map(str, FLIP_SIZE)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert app.stdout is not None
    ready, _, _ = select.select([app.stdout], [], [], 60)
    assert ready and app.stdout.readline().strip() == "ready", "the flipping window did not start"
    return app


def torn_frames(backend: XvfbBackend) -> tuple[int, set[tuple[int, int, int]]]:
    """Capture the flipping window ``CAPTURES`` times; count frames holding both colours."""
    region = Region(x=0, y=0, width=FLIP_SIZE[0], height=FLIP_SIZE[1])
    torn, seen = 0, set()
    for _ in range(CAPTURES):
        colours = {rgb for _, rgb in backend.capture(region=region).to_pil().getcolors(8) or []}
        seen |= colours
        torn += len(colours) > 1
    return torn, seen


@pytest.fixture(scope="module")
def viewfinder_display() -> Iterator[Display]:
    with Display(640, 480) as display:
        yield display


@pytest.mark.parametrize("where", ["viewfinder display", "display started by hand"])
def test_no_torn_frame_of_a_window_repainting_as_fast_as_it_can(
    where, viewfinder_display, hand_displays
) -> None:
    name = viewfinder_display.name if where == "viewfinder display" else hand_displays["shm"].name
    app = _flipping_window({**os.environ, "DISPLAY": name})
    try:
        with XvfbBackend(name, still_frames=False) as backend:
            torn, seen = torn_frames(backend)
    finally:
        app.kill()
        app.wait()
    assert seen == FLIP_COLOURS  # it really flipped while we captured
    assert torn == 0
