"""The step log's memory stays bounded: frames on disk with a session folder, only the
last few in memory without one."""

from __future__ import annotations

import threading
from pathlib import Path

from PIL import Image

from viewfinder.core import Event, EventKind
from viewfinder.core.screenshot import utc_now
from viewfinder.desktop.steps import MAX_PENDING, StepLog


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


def test_an_action_never_waits_for_a_starved_writer() -> None:
    """The background writer runs at the lowest priority, and a loaded machine can
    starve it for seconds (held here until the test lets it go): the steps added
    meanwhile are encoded by the caller once MAX_PENDING frames wait, so adding one
    never waits for the queue, and every step keeps its own frame, in order."""
    log = StepLog((64, 48), ":99", None, frames_in_memory=20)
    held, added = threading.Event(), threading.Event()
    try:
        log._writer.submit(held.wait, 30)  # the writer, starved

        def add_all() -> None:
            for shade in range(12):
                log.add(Event(kind=EventKind.SCREENSHOT), frame(shade * 20), utc_now())
            added.set()

        worker = threading.Thread(target=add_all, daemon=True)
        worker.start()
        assert added.wait(20), "adding a step waited for the starved writer"
        assert not held.is_set() and len(log._pending) <= MAX_PENDING
        held.set()
        steps = log.steps()
    finally:
        held.set()
        log.close()
    assert [step.frame.pixel(1, 1)[0] for step in steps if step.frame] == list(range(0, 240, 20))
