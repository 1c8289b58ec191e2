"""The element a press is recorded with is the one from before the press.

A real GTK 3 button labelled 'Start' relabels itself 'Stop' when clicked. Clicked with
xdotool while ``viewfinder record`` records, its line must name 'Start' (what the person
clicked), not 'Stop' (what the click produced), and ``viewfinder cache build`` must keep
'Start'. A unit test holds the pairing rule: a read from after the press, or one the
screen changed under before the press, is not used.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core import Element, ElementTree, Region, elements
from viewfinder.recorder import read_session, tree_reads
from viewfinder.recorder.tree_reads import TreeReads
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi


class StartStop:
    """The running GTK app: its button's centre and the lines it printed."""

    def __init__(self, process: subprocess.Popen[str], centre: tuple[int, int]) -> None:
        self.process = process
        self.centre = centre
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.strip())


@pytest.fixture
def start_stop(apps: Any) -> Iterator[tuple[Display, StartStop]]:
    with Display(640, 480, accessibility=True) as display:
        process, _ = apps.start(display, [SYSTEM_PYTHON, str(HERE / "gtk_start_stop_app.py")])
        try:
            tree = elements("atspi", display=display.name)
            (button,) = [e for e in tree.walk() if e.role == "push button"]
            assert button.name == "Start" and button.box is not None
            yield display, StartStop(process, (button.box.center.x, button.box.center.y))
        finally:
            apps.stop(process)


def button_name(display: Display) -> str:
    tree = elements("atspi", display=display.name)
    (button,) = [e for e in tree.walk() if e.role == "push button"]
    return button.name


def test_a_button_that_relabels_itself_is_recorded_by_the_label_that_was_clicked(
    tmp_path: Path,
    start_stop: tuple[Display, StartStop],
    wait_until: Callable[..., Any],
) -> None:
    display, app = start_stop
    x, y = app.centre
    xdo = ["xdotool", "mousemove", str(x), str(y), "click", "1"]
    # The pointer rests on the button first, as a person's does before a click: the
    # button's hover look is painted then, not in the instant before the press (a
    # repaint there leaves the element out, since no read can be from after it).
    subprocess.run(xdo[:4], env=display.env(), check=True, timeout=20)
    time.sleep(1.0)
    folder = tmp_path / "session"
    command = [sys.executable, "-m", "viewfinder.cli", "record", "--display", display.name]
    recorder = subprocess.Popen(
        [*command, "--out", str(folder), "--interval", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert recorder.stdout is not None
        assert "elements from atspi" in recorder.stdout.readline()
        subprocess.run(xdo, env=display.env(), check=True, timeout=20)
        first = recorder.stdout.readline()
        wait_until(lambda: app.lines == ["clicked Start"], "the app's first click")
        wait_until(lambda: button_name(display) == "Stop", "the button to say Stop")
        # A person looks at the result before clicking again: the recorder reads the
        # tree on the repaint, well within this pause on a loaded machine.
        time.sleep(1.5)
        subprocess.run(xdo, env=display.env(), check=True, timeout=20)
        second = recorder.stdout.readline()
        wait_until(lambda: app.lines == ["clicked Start", "clicked Stop"], "the second click")
        recorder.send_signal(signal.SIGINT)
        out, err = recorder.communicate(timeout=30)
    finally:
        recorder.kill()
        recorder.wait(10)
    assert recorder.returncode == 0, err
    assert app.lines == ["clicked Start", "clicked Stop"]  # nothing else was clicked
    assert f"click ({x}, {y}) on push button 'Start'" in first
    assert f"click ({x}, {y}) on push button 'Stop'" in second
    assert "recorded 2 events (2 click)" in out

    lines = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]
    assert [(line["kind"], line["element"]["name"]) for line in lines] == [
        ("click", "Start"),
        ("click", "Stop"),
    ]
    run = read_session(folder).metadata.runs[-1]
    assert run.elements is not None
    assert (run.elements["lookups"], run.elements["found"], run.elements["not_before"]) == (2, 2, 0)

    cache = tmp_path / "start.json"
    built = CliRunner().invoke(build_app(), ["cache", "build", str(folder), "-o", str(cache)])
    assert built.exit_code == 0, built.output
    steps = json.loads(cache.read_text())["trajectory"]
    named = [(step["visual_element"]["role"], step["visual_element"]["name"]) for step in steps]
    assert named == [("push button", "Start"), ("push button", "Stop")]


# -- the pairing rule, on reads whose instants are given -------------------------------


def tree_named(name: str) -> ElementTree:
    button = Element(
        ref="e1", role="push button", name=name, box=Region(x=0, y=0, width=9, height=9)
    )
    return ElementTree(source="test", roots=(button,))


class Reads:
    """Hands out trees named in turn, each read taking 20 ms of a clock of its own."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def read(self) -> ElementTree:
        self.now += 0.02
        return tree_named(self.names.pop(0))


def test_a_read_after_the_press_or_one_the_screen_changed_under_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = Reads(["Start", "Stop", "Stop"])
    monkeypatch.setattr(tree_reads.time, "monotonic", source.monotonic)
    watch = SimpleNamespace(sync=lambda: None, clock=SimpleNamespace(uncertainty_ms=1.0))
    reads = TreeReads(source.read, watch, ":test")
    source.now = 10.0
    reads._read_once()  # read 10.00-10.02: 'Start'
    # A press at 15: the read from 10 serves while the screen stayed still.
    read = reads.before(15.0)
    assert read is not None and read.tree.roots[0].name == "Start"
    reads.changed(16.0)  # the press's result is painted (after the press)
    source.now = 20.0
    reads._read_once()  # read 20.00-20.02: 'Stop'
    # The press at 15 is still paired with 'Start': the later read is not from before it.
    read = reads.before(15.0)
    assert read is not None and read.tree.roots[0].name == "Start"
    # A press at 20.01 happened while the 'Stop' read was under way: the newest read
    # finished before it is the 'Start' one, and the screen changed (at 16) since it
    # began, so there is none.
    assert reads.before(20.01) is None
    # Later presses get 'Stop', until a repaint before the press with no read since.
    read = reads.before(25.0)
    assert read is not None and read.tree.roots[0].name == "Stop"
    # A repaint stamped a ms or two before a press is the press's own reaction (the
    # server stamps it with the last time it noted): the read still serves.
    reads.changed(24.999)
    read = reads.before(25.0)
    assert read is not None and read.tree.roots[0].name == "Stop"
    reads.changed(26.0)
    assert reads.before(27.0) is None
    source.now = 30.0
    reads._read_once()  # read 30.00-30.02, after the repaint at 26
    read = reads.before(31.0)
    assert read is not None and read.started == 30.0
    assert reads.stats.reads == 3 and reads.stats.failed == 0
