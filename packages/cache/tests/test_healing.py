"""Healing replays on a real GTK 3 form on a real Xvfb with its accessibility buses.

The form (heal_form.py) is recorded once in its original layout: a click on the "Save"
button, on the canvas-painted "Go" picture, and on "Cancel", each with the frame
captured from the display and the element under the point read from the live tree.
Then the app is restarted in a changed layout and the cache replayed; the app prints
every click that lands, so each test says what was clicked and that nothing else was.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from viewfinder.cache import (
    CacheExecutor,
    ExecutionSettings,
    ReplayResult,
    ReplayStatus,
    build_cache,
    build_from_trajectory,
    read_cache_file,
    save_cache_file,
)
from viewfinder.cli.app import build_app
from viewfinder.core import Event, EventKind, Point, Trajectory, get_element_source
from viewfinder.desktop.testing import LoggedApp
from viewfinder.recorder import Recorder
from viewfinder.xvfb import Display

from .conftest import LoggedForm

HERE = Path(__file__).parent
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
SAVE, GO, CANCEL = Point(x=90, y=58), Point(x=85, y=257), Point(x=90, y=138)
#: the canvas away from every picture: a click there is the app's last word
SENTINEL = Point(x=620, y=470)


def App(display: Display, layout: str) -> LoggedForm:
    """heal_form.py in one layout; ``close()`` returns the clicks it printed."""
    return LoggedForm(SYSTEM_PYTHON, HERE / "heal_form.py", display, layout, SENTINEL)


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(640, 480, accessibility=True) as display:
        yield display


@pytest.fixture(scope="module")
def recorded(display: Display, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cache of three clicks on the original form, with their elements."""
    app = App(display, "original")
    trajectory = Trajectory()
    try:
        with (
            display.backend() as screen,
            get_element_source("atspi", display=display.name) as source,
        ):
            for point in (SAVE, GO, CANCEL):
                frame = screen.capture()
                tree = source.read()
                under = tree.element_at(point.x, point.y)
                anchor = tree.anchor(under) if under is not None else None
                event = Event(kind=EventKind.CLICK, position=point, element=anchor)
                trajectory.append(event, frame=frame)
                screen.act(event)
    finally:
        clicks = app.close()
    assert clicks == ["clicked Save", "clicked Go", "clicked Cancel"]
    path = tmp_path_factory.mktemp("healing") / "form.json"
    save_cache_file(build_from_trajectory(trajectory, goal="save, go, cancel"), path)
    return path


def replay(
    display: Display,
    recorded: Path,
    tmp_path: Path,
    layout: str,
    *,
    start: int = 0,
    heal: bool = True,
    cover: str | None = None,
) -> tuple[ReplayResult, list[str], Path]:
    """Replay a copy of the recording on the form in ``layout`` (with another app's
    window at ``cover``, a Tk geometry, lying over it): the result, the clicks the apps
    printed, and the copy (with what the replay wrote into it)."""
    copy = tmp_path / "form.json"
    shutil.copy(recorded, copy)
    app = App(display, layout)
    covering = (
        LoggedApp([sys.executable, str(HERE / "cover_app.py"), cover], display.env())
        if cover
        else None
    )
    try:
        with display.backend() as screen:
            options = ExecutionSettings(delay_time_between_actions=0.3, settle_time=0.3, heal=heal)
            result = CacheExecutor(screen, options).run(copy, start_from_step_index=start)
    finally:
        clicks = app.close()
        if covering is not None:
            clicks += covering.said()  # its clicks came before the form's sentinel
            covering.stop()
    return result, clicks, copy


def test_the_recording_keeps_each_clicks_element_and_region(recorded: Path) -> None:
    cache = read_cache_file(recorded)
    save, go, cancel = cache.trajectory
    assert save.visual_element is not None and cancel.visual_element is not None
    assert (save.visual_element.role, save.visual_element.name) == ("push button", "Save")
    assert save.visual_element.path[0] == ("application", "heal_form.py")
    assert save.visual_element.box is not None and save.visual_element.box.x == 40
    # the canvas has no element of its own: what is under the picture is the whole area
    assert go.visual_element is not None and go.visual_element.role == "drawing area"
    assert all(block.visual_thumbnail for block in cache.trajectory)


def test_a_moved_button_heals_by_element_and_a_painted_one_by_template(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    result, clicks, copy = replay(display, recorded, tmp_path, "moved")
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert clicks == ["clicked Save", "clicked Go", "clicked Cancel"]
    steps = result.steps
    assert [step.healed for step in steps] == ["element", "template", None]
    assert steps[0].healed_to == [SAVE.x + 120, SAVE.y]
    assert steps[1].healed_to == [GO.x, GO.y + 120]

    heals = json.loads(copy.read_text())["metadata"]["heals"]
    assert [(h["step_index"], h["method"], h["from"], h["to"], h["shift"]) for h in heals] == [
        (0, "element", [90, 58], [210, 58], [120, 0]),
        (1, "template", [85, 257], [85, 377], [0, 120]),
    ]
    assert heals[0]["element"] == "push button 'Save'"
    assert heals[1]["score"] >= 0.9
    cache = read_cache_file(copy)
    assert cache.metadata.failures == [] and cache.metadata.execution_attempts == 1

    shown = CliRunner().invoke(build_app(), ["cache", "show", str(copy)])
    assert shown.exit_code == 0, shown.output
    assert "step 0 by element push button 'Save': (90, 58) -> (210, 58), shift (+120, +0)" in (
        shown.output
    )
    assert "step 1 by template (score" in shown.output and "shift (+0, +120)" in shown.output
    as_json = CliRunner().invoke(build_app(), ["cache", "show", str(copy), "--json"])
    assert json.loads(as_json.output)["metadata"]["heals"][0]["from"] == [90, 58]


def assert_stopped_untouched(replayed: tuple[ReplayResult, list[str], Path], step: int) -> None:
    """The replay handed over at ``step``, nothing reached the app, nothing was healed."""
    result, clicks, copy = replayed
    assert (result.status, result.step_index) == (ReplayStatus.NEEDS_AGENT, step), result.message
    assert clicks == []
    assert not any(outcome.healed for outcome in result.steps)
    assert "heals" not in json.loads(copy.read_text())["metadata"]


def test_a_recorder_session_of_the_form_heals_the_same_way(
    display: Display, tmp_path: Path
) -> None:
    # the real recorder names the element under each click in its manifest lines
    app = App(display, "original")
    folder = tmp_path / "session"
    try:
        with (
            Recorder(folder, "xvfb", backend_options={"display": display.name}) as recorder,
            display.backend() as screen,
        ):
            for point in (SAVE, GO, CANCEL):
                screen.act(recorder.click(point.x, point.y))
    finally:
        assert app.close() == ["clicked Save", "clicked Go", "clicked Cancel"]
    cache = build_cache(folder)
    element = cache.trajectory[0].visual_element
    assert element is not None and (element.role, element.name) == ("push button", "Save")
    save_cache_file(cache, tmp_path / "recorded.json")
    result, clicks, _ = replay(display, tmp_path / "recorded.json", tmp_path, "moved")
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert [step.healed for step in result.steps] == ["element", "template", None]
    assert clicks == ["clicked Save", "clicked Go", "clicked Cancel"]


def test_without_its_element_a_button_among_look_alikes_is_not_healed_by_picture(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    # as if the app had exposed no tree: only the picture is left, and "Save" looks too
    # much like "Support" and "Cancel" (blue, same size) for the place to be certain
    cache = read_cache_file(recorded)
    anchor = cache.trajectory[0].visual_element
    assert anchor is not None
    elsewhere = (("application", "another-app"), *anchor.path[1:])
    cache.trajectory[0].visual_element = anchor.model_copy(update={"path": elsewhere})
    save_cache_file(cache, tmp_path / "other.json")
    assert_stopped_untouched(replay(display, tmp_path / "other.json", tmp_path, "moved"), 0)


def test_a_removed_button_ends_in_needs_agent_with_nothing_clicked(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    assert_stopped_untouched(replay(display, recorded, tmp_path, "removed"), 0)


def test_a_moved_button_that_is_greyed_out_is_not_healed(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    assert_stopped_untouched(replay(display, recorded, tmp_path, "disabled"), 0)


def test_a_look_alike_elsewhere_ends_in_needs_agent_with_nothing_clicked(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    # "Save" is gone from the form; a button that looks the same sits in another frame
    assert_stopped_untouched(replay(display, recorded, tmp_path, "lookalike"), 0)
    # the painted "Go" moved, and has a twin within reach: two places, neither is certain
    assert_stopped_untouched(replay(display, recorded, tmp_path, "lookalike", start=1), 1)


def test_no_heal_stops_at_the_first_moved_step(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    assert_stopped_untouched(replay(display, recorded, tmp_path, "moved", heal=False), 0)


def test_the_original_form_replays_without_healing(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    result, clicks, copy = replay(display, recorded, tmp_path, "original")
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert [step.healed for step in result.steps] == [None, None, None]
    assert clicks == ["clicked Save", "clicked Go", "clicked Cancel"]
    assert "heals" not in json.loads(copy.read_text())["metadata"]


@pytest.mark.parametrize("label", ["Pay", "Buy", "Open"])
def test_a_button_relabelled_in_place_is_not_clicked(
    display: Display, recorded: Path, tmp_path: Path, label: str
) -> None:
    # the picture of the region is close enough to pass its hash; the element under the
    # point is no longer the recorded 'Save', and the replay hands over before it
    result, clicks, copy = replay(display, recorded, tmp_path, f"original:{label}")
    assert (result.status, result.step_index) == (ReplayStatus.NEEDS_AGENT, 0), result.message
    assert clicks == []
    assert f"the element at (90, 58) is now push button {label!r}, not the recorded " in (
        result.message
    )
    assert "push button 'Save'" in result.message
    failures = read_cache_file(copy).metadata.failures
    assert [failure.step_index for failure in failures] == [0]


def test_a_button_relabelled_and_moved_is_not_healed(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    assert_stopped_untouched(replay(display, recorded, tmp_path, "moved:Pay"), 0)


def test_a_healed_button_under_another_apps_window_is_not_clicked(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    # Save moved to (160, 40)..(260, 76); "Confirm" lies over its new middle
    result, clicks, copy = replay(display, recorded, tmp_path, "moved", cover="160x80+150+20")
    assert (result.status, result.step_index) == (ReplayStatus.NEEDS_AGENT, 0), result.message
    assert clicks == []  # neither the form nor the covering window got a click
    assert "healed by element" in result.message
    assert "but window 'Confirm'" in result.message
    assert "is in front at (210, 58), not a window of 'heal_form.py'" in result.message
    assert "heals" not in json.loads(copy.read_text())["metadata"]


def test_a_plain_step_under_another_apps_window_is_not_clicked(
    display: Display, recorded: Path, tmp_path: Path
) -> None:
    # the same window lying over Save where it was recorded: what is under the point
    # is another application's, whatever the picture there looks like
    result, clicks, _ = replay(display, recorded, tmp_path, "original", cover="60x20+70+48")
    assert (result.status, result.step_index) == (ReplayStatus.NEEDS_AGENT, 0), result.message
    assert clicks == []
    assert "window 'Confirm'" in result.message
    assert "is in front at (90, 58), not a window of 'heal_form.py'" in result.message
