"""The step log's memory stays bounded: frames on disk with a session folder, only the
last few in memory without one."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from viewfinder.core import Event, EventKind
from viewfinder.core.screenshot import utc_now
from viewfinder.desktop.steps import StepLog


def frame(shade: int) -> Image.Image:
    return Image.new("RGB", (64, 48), (shade, 255 - shade, 7))


def test_without_a_folder_only_the_last_frames_stay_in_memory() -> None:
    log = StepLog((64, 48), ":99", None, frames_in_memory=3)
    try:
        for shade in range(10):
            log.add(Event(kind=EventKind.SCREENSHOT), frame(shade * 20), utc_now())
        steps = log.steps()
    finally:
        log.close()
    assert len(steps) == 10
    assert [step.frame is not None for step in steps] == [False] * 7 + [True] * 3
    assert [step.frame.pixel(1, 1)[0] for step in steps[7:] if step.frame] == [140, 160, 180]


def test_with_a_folder_frames_live_on_disk_and_are_read_back(tmp_path: Path) -> None:
    log = StepLog((64, 48), ":99", tmp_path / "run")
    try:
        for shade in range(10):
            log.add(Event(kind=EventKind.SCREENSHOT), frame(shade * 20), utc_now())
        steps = log.steps()
        held = [step.result() if hasattr(step, "result") else step for step in log._steps]
    finally:
        log.close()
    assert all(step.frame is None for step in held)  # nothing kept in memory
    assert [step.frame.pixel(1, 1)[0] for step in steps if step.frame] == list(range(0, 200, 20))
    assert len(list((tmp_path / "run" / "screenshots").glob("*.png"))) == 10
