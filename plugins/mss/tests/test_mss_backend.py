"""The mss backend on a real Xvfb display: monitors, regions and errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from viewfinder.core import (
    BackendUnavailableError,
    CaptureError,
    CaptureNotSupportedError,
    DisplayGoneError,
    Region,
    get_backend,
)
from viewfinder.mss import MssBackend
from viewfinder.xvfb import Display


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(320, 200) as started:
        yield started


def test_monitor_zero_and_one_are_the_whole_screen(display: Display) -> None:
    for monitor in (0, 1):
        with MssBackend(monitor=monitor, display=display.name) as backend:
            assert backend.screen_size() == (320, 200)
            shot = backend.capture()
            assert (shot.width, shot.height) == (320, 200)
            assert shot.source == "mss"


def test_region_is_relative_to_the_monitor(display: Display) -> None:
    with MssBackend(display=display.name) as backend:
        shot = backend.capture(region=Region(x=10, y=20, width=30, height=40))
    assert (shot.width, shot.height) == (30, 40)
    assert shot.region == Region(x=10, y=20, width=30, height=40)


def test_monitor_that_does_not_exist(display: Display) -> None:
    with pytest.raises(CaptureError, match="monitor 5 does not exist; this screen has monitors 0"):
        MssBackend(monitor=5, display=display.name)


def test_windows_are_not_supported(display: Display) -> None:
    with MssBackend(display=display.name) as backend, pytest.raises(CaptureNotSupportedError):
        backend.capture(window=0x400001)


def test_display_that_is_not_running() -> None:
    with pytest.raises(DisplayGoneError, match="cannot open X display :987"):
        MssBackend(display=":987")


def test_unavailable_without_any_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    assert not MssBackend.availability()
    assert "DISPLAY is not set" in MssBackend.availability().reason
    with pytest.raises(BackendUnavailableError, match="DISPLAY is not set"):
        get_backend("mss")


def test_display_option_makes_it_available(
    monkeypatch: pytest.MonkeyPatch, display: Display
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    assert MssBackend.availability(display=display.name)
    with get_backend("mss", display=display.name) as backend:
        assert backend.capture().width == 320


def test_capture_from_another_thread(display: Display) -> None:
    import threading

    sizes: list[int] = []
    with MssBackend(display=display.name) as backend:
        worker = threading.Thread(target=lambda: sizes.append(backend.capture().width))
        worker.start()
        worker.join(30)
        sizes.append(backend.capture().width)
    assert sizes == [320, 320]
