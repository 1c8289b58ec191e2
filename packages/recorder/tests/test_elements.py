"""The element under each pointer action, on a real Xvfb with its accessibility bus.

A real GTK 3 form (Debian's python3-gi, run with the system Python) clicked with real X
input (xdotool through XTest) while the X RECORD listener records: each line names the
element the pointer was on, as the display's AT-SPI tree has it; a Tk app (no tree) and
a display without the bus record as before.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from viewfinder.core import ElementAnchor, ElementTree, elements
from viewfinder.core.testing import wait_until
from viewfinder.recorder import (
    Recorder,
    X11RecordInput,
    load_session,
    pointer_elements,
    read_session,
    tree_reads,
)
from viewfinder.xvfb import Display

HERE = Path(__file__).parent
GTK_FORM = HERE.parents[2] / "plugins" / "xvfb" / "tests" / "gtk_form.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
BLUE = (0, 0, 255)
FORM_PATH = [["application", "gtk_form.py"], ["frame", "GTK form"], ["filler", ""]]


def manifest_lines(folder: Path) -> list[dict[str, Any]]:
    path = folder / "manifest.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def gtk(
    apps: Any, calm_gtk: dict[str, str]
) -> Iterator[tuple[Display, subprocess.Popen[str], ElementTree]]:
    """A display with its accessibility bus, the GTK form on it, and its tree."""
    with Display(640, 480, accessibility=True) as display:
        app, _ = apps.start(display, [SYSTEM_PYTHON, str(GTK_FORM)], calm_gtk)
        try:
            yield display, app, elements("atspi", display=display.name)
        finally:
            apps.stop(app)


def centre_of(tree: ElementTree, role: str, name: str = "") -> tuple[int, int]:
    (found,) = [e for e in tree.walk() if e.role == role and e.name == name]
    assert found.box is not None
    return found.box.center.x, found.box.center.y


def holds(box: dict[str, int], x: int, y: int) -> bool:
    return box["x"] <= x < box["x"] + box["width"] and box["y"] <= y < box["y"] + box["height"]


def listening(folder: Path, display: Display) -> Recorder:
    """A recorder of ``display`` that listens to its real input."""
    return Recorder(
        folder,
        "xvfb",
        backend_options={"display": display.name},
        input_source=X11RecordInput(display.name),
        interval=0.2,
    )


def looked_at(recorder: Recorder) -> None:
    """Wait until the screen has been still a moment and the recorder has read the
    tree since it last changed."""
    lookups = recorder.elements
    assert lookups is not None and lookups.reads is not None
    reads = lookups.reads
    wait_until(lambda: reads.current(quiet=1.0), "a still screen, read since it changed")


def xdotool(display: Display, *args: str) -> None:
    subprocess.run(["xdotool", *args], env=display.env(), check=True, timeout=20)


def test_clicks_scrolls_and_drags_on_a_gtk_form_name_the_element_under_the_pointer(
    tmp_path: Path,
    gtk: tuple[Display, subprocess.Popen[str], ElementTree],
    wait_until: Callable[..., Any],
) -> None:
    display, _, tree = gtk
    save, field = centre_of(tree, "push button", "Save"), centre_of(tree, "text")
    check = centre_of(tree, "check box", "Remember me")
    folder = tmp_path / "session"
    recorder = listening(folder, display)

    def lines(count: int) -> list[dict[str, Any]]:
        found = wait_until(
            lambda: (found := manifest_lines(folder)) and len(found) == count and found,
            f"{count} manifest lines",
        )
        # As a person looks at the result before acting again: the recorder has read
        # the tree since the last repaint (a press sooner goes without its element).
        looked_at(recorder)
        return found

    with recorder:
        assert recorder.element_source == "atspi"
        xdotool(display, "mousemove", str(save[0]), str(save[1]))
        looked_at(recorder)
        xdotool(display, "click", "1")
        lines(1)
        xdotool(display, "mousemove", str(field[0]), str(field[1]))
        looked_at(recorder)
        xdotool(display, "click", "1")
        lines(2)
        xdotool(display, "mousemove", str(check[0]), str(check[1]))
        looked_at(recorder)
        xdotool(display, "click", "5", "click", "5")
        lines(3)
        xdotool(display, "mousemove", "30", "400", "click", "1")  # the bare root window
        lines(4)
        xdotool(display, "mousemove", str(save[0]), str(save[1]))
        looked_at(recorder)
        xdotool(display, "mousedown", "1")
        xdotool(display, "mousemove", "300", "300", "mouseup", "1")
        lines(5)
    written = manifest_lines(folder)
    assert [line["kind"] for line in written] == ["click", "click", "scroll", "click", "drag"]

    click_save = written[0]
    assert click_save["element"]["role"] == "push button"
    assert click_save["element"]["name"] == "Save"
    assert click_save["element"]["path"] == FORM_PATH
    box = click_save["element"]["box"]
    assert holds(box, *save)
    # The box is where the button's pixels are in the frame from before the click.
    with Image.open(folder / click_save["screenshot"]) as image:
        frame = image.convert("RGB")
    assert frame.getpixel((box["x"] + 2, box["y"] + 2)) == BLUE
    assert frame.getpixel((box["x"] + box["width"] - 3, box["y"] + box["height"] - 3)) == BLUE
    assert frame.getpixel((box["x"] + box["width"] // 2, box["y"] + box["height"] + 4)) != BLUE

    click_field = written[1]["element"]
    assert (click_field["role"], click_field["path"]) == ("text", FORM_PATH)
    assert "name" not in click_field and holds(click_field["box"], *field)
    scroll = written[2]["element"]
    assert (scroll["role"], scroll["name"]) == ("check box", "Remember me")
    assert holds(scroll["box"], *check)
    assert "element" not in written[3]  # nothing of any app's tree under the pointer
    drag = written[4]
    assert drag["start_position"] == {"x": save[0], "y": save[1]}
    assert drag["element"] == click_save["element"]  # the press point's element

    # Read back: the session, the trajectory and `record show`.
    steps = load_session(folder, frames=False).steps
    assert steps[0].event.element == ElementAnchor.model_validate(click_save["element"])
    assert steps[0].event.element is not None and steps[3].event.element is None
    assert steps[0].event.element.describe() == "push button 'Save'"
    run = read_session(folder).metadata.runs[-1]
    assert run.elements is not None
    assert (run.elements["source"], run.elements["lookups"]) == ("atspi", 5)
    assert (run.elements["found"], run.elements["not_before"], run.elements["failed"]) == (4, 0, 0)
    assert run.elements["reads"] >= 1
    from typer.testing import CliRunner

    from viewfinder.cli.app import build_app

    shown = CliRunner().invoke(build_app(), ["record", "show", str(folder)])
    assert shown.exit_code == 0, shown.output
    assert f"click ({save[0]}, {save[1]}) on push button 'Save'" in shown.output
    assert "click (30, 400)  " in shown.output
    rows = CliRunner().invoke(build_app(), ["record", "show", str(folder), "--json"]).output
    named = [json.loads(row)["element"] for row in rows.splitlines()]
    assert named == [line.get("element") for line in written]


def test_elements_can_be_turned_off(
    tmp_path: Path, gtk: tuple[Display, subprocess.Popen[str], ElementTree]
) -> None:
    display, _, tree = gtk
    save = centre_of(tree, "push button", "Save")
    with Recorder(
        tmp_path / "off", "xvfb", backend_options={"display": display.name}, elements=False
    ) as recorder:
        assert recorder.element_source is None
        recorder.click(*save)
    with Recorder(tmp_path / "on", "xvfb", backend_options={"display": display.name}) as recorder:
        recorder.click(*save)
        recorder.right_click(*save)
        recorder.key("Return")
    assert "element" not in manifest_lines(tmp_path / "off")[0]
    off = read_session(tmp_path / "off").metadata.runs[-1].elements
    assert off == {"source": None, "reason": "turned off"}
    on = manifest_lines(tmp_path / "on")
    assert on[0]["element"]["name"] == on[1]["element"]["name"] == "Save"
    assert on[1]["kind"] == "right_click" and "element" not in on[2]  # a key has none


def test_an_application_that_stops_answering_costs_one_timeout_per_pause_and_the_recording_goes_on(
    tmp_path: Path,
    gtk: tuple[Display, subprocess.Popen[str], ElementTree],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    display, app, tree = gtk
    save = centre_of(tree, "push button", "Save")
    monkeypatch.setattr(pointer_elements, "READ_TIMEOUT_S", 0.3)
    monkeypatch.setattr(tree_reads, "RETRY_AFTER_S", 1.0)
    monkeypatch.setattr(tree_reads, "REFRESH_S", 0.1)
    caplog.set_level(logging.WARNING, logger=tree_reads.__name__)
    folder = tmp_path / "session"
    with Recorder(folder, "xvfb", backend_options={"display": display.name}) as recorder:
        assert recorder.elements is not None and recorder.elements.reads is not None
        reads = recorder.elements.reads
        stats = reads.stats
        os.kill(app.pid, signal.SIGSTOP)
        try:
            wait_until(lambda: stats.failed >= 1, "a read to time out")
            # Nothing was repainted since the last read that worked: it still holds.
            recorder.click(*save)
            time.sleep(2.0)  # long enough for 20 reads at 0.1 s if failures did not pause
            failed_while_stopped = stats.failed
        finally:
            os.kill(app.pid, signal.SIGCONT)
        wait_until(lambda: elements("atspi", display=display.name).count() > 1, "the app's tree")
        resumed = time.monotonic()
        wait_until(
            lambda: (read := reads.latest) and read.started > resumed and reads.current(),
            "a read that works after the pause",
        )
        recorder.click(*save)  # answering again
        assert recorder.running
    assert 1 <= failed_while_stopped <= 3
    written = manifest_lines(folder)
    assert [line["element"]["name"] for line in written] == ["Save", "Save"]
    warnings = [r for r in caplog.records if "could not read the accessibility tree" in r.message]
    assert len(warnings) == 1
    run = read_session(folder).metadata.runs[-1]
    assert run.elements is not None and run.elements["failed"] == stats.failed
    assert (run.elements["lookups"], run.elements["found"]) == (2, 2)


def test_a_tk_app_and_a_display_without_the_bus_record_without_elements(
    tmp_path: Path, display: Display, form: Any, apps: Any
) -> None:
    go = form.centre("go")
    with Recorder(tmp_path / "plain", "xvfb", backend_options={"display": display.name}) as rec:
        assert rec.element_source is None
        rec.click(*go)
    assert "element" not in manifest_lines(tmp_path / "plain")[0]
    note = read_session(tmp_path / "plain").metadata.runs[-1].elements
    assert note == {"source": None, "reason": f"display {display.name} has no accessibility bus"}

    with Display(640, 480, accessibility=True) as bus_display:
        tk, layout = apps.start(bus_display, [sys.executable, str(HERE / "form_app.py")])
        try:
            x, y, w, h = json.loads(layout)["go"]
            folder = tmp_path / "tk"
            with Recorder(folder, "xvfb", backend_options={"display": bus_display.name}) as rec:
                assert rec.element_source == "atspi"  # the bus is there; Tk puts nothing on it
                rec.click(x + w // 2, y + h // 2)
                rec.scroll(x + w // 2, y + h // 2, dy=1)
        finally:
            apps.stop(tk)
    written = manifest_lines(folder)
    assert [line["kind"] for line in written] == ["click", "scroll"]
    assert all("element" not in line for line in written)
    run = read_session(folder).metadata.runs[-1]
    assert run.elements is not None and (run.elements["lookups"], run.elements["found"]) == (2, 0)


def test_an_element_under_a_window_without_a_tree_is_not_named(
    tmp_path: Path,
    gtk: tuple[Display, subprocess.Popen[str], ElementTree],
    wait_until: Callable[..., Any],
    apps: Any,
) -> None:
    display, _, tree = gtk
    save = centre_of(tree, "push button", "Save")
    folder = tmp_path / "session"
    recorder = listening(folder, display)
    with recorder:
        # The Tk form opens over the GTK form: the tree still holds 'Save' at that point,
        # but what the pointer is on is Tk's, which exposes nothing.
        tk, _ = apps.start(display, [sys.executable, str(HERE / "form_app.py")])
        try:
            xdotool(display, "mousemove", str(save[0]), str(save[1]))
            looked_at(recorder)
            xdotool(display, "click", "1")
            wait_until(lambda: len(manifest_lines(folder)) == 1, "the click's line")
        finally:
            apps.stop(tk)
        wait_until(lambda: recorder.backend.capture().pixel(*save) == BLUE, "Save shown again")
        looked_at(recorder)
        xdotool(display, "click", "1")
        wait_until(lambda: len(manifest_lines(folder)) == 2, "the second click's line")
    under_tk, on_save = manifest_lines(folder)
    assert under_tk["position"] == on_save["position"] == {"x": save[0], "y": save[1]}
    assert "element" not in under_tk
    assert on_save["element"]["name"] == "Save"
    run = read_session(folder).metadata.runs[-1]
    assert run.elements is not None
    assert (run.elements["lookups"], run.elements["found"], run.elements["covered"]) == (2, 1, 1)


def bus_clients(address: str) -> list[int]:
    """The process ids of the connections on the bus at ``address`` (ours excluded)."""
    from jeepney.bus_messages import message_bus
    from jeepney.io.blocking import open_dbus_connection

    with open_dbus_connection(bus=address) as conn:
        names = conn.send_and_get_reply(message_bus.ListNames()).body[0]
        ours = conn.unique_name
        return [
            conn.send_and_get_reply(message_bus.GetConnectionUnixProcessID(name)).body[0]
            for name in names
            if name.startswith(":") and name != ours
        ]


def test_sigkill_mid_session_leaves_whole_lines_with_elements_and_no_bus_connection(
    tmp_path: Path,
    gtk: tuple[Display, subprocess.Popen[str], ElementTree],
    kill_mid_session: Callable[..., int],
) -> None:
    display, _, _ = gtk
    bus = display.accessibility_bus
    assert bus is not None and bus.address is not None
    folder = tmp_path / "session"
    # it clicks along the diagonal from (0, 0): the first 40 lines are all on the form
    pid = kill_mid_session(folder, display, 40)
    raw = (folder / "manifest.jsonl").read_bytes()
    assert raw.endswith(b"\n")
    steps = load_session(folder).steps  # every line whole, every frame there
    assert len(steps) == raw.count(b"\n")
    named = [step.event.element for step in steps if step.event.element is not None]
    assert len(named) >= 3
    assert all(anchor.path[0] == ("application", "gtk_form.py") for anchor in named)
    # Nothing of the dead recorder stays on the accessibility bus.
    wait_until(lambda: pid not in bus_clients(bus.address), "the bus to drop it")


@pytest.mark.parametrize("flags", [(), ("--no-elements",)])
def test_viewfinder_record_prints_the_element_of_each_click_unless_told_not_to(
    tmp_path: Path, gtk: tuple[Display, subprocess.Popen[str], ElementTree], flags: tuple[str, ...]
) -> None:
    display, _, tree = gtk
    save = centre_of(tree, "push button", "Save")
    # The pointer rests on Save before the recording starts, as a person's does before
    # a click: its hover look is painted then, not in the instant before the press.
    xdotool(display, "mousemove", str(save[0]), str(save[1]))
    time.sleep(1.0)
    folder = tmp_path / "s"
    command = [sys.executable, "-m", "viewfinder.cli", "record", "--display", display.name]
    process = subprocess.Popen(
        [*command, "--out", str(folder), "--interval", "0.2", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert "press Ctrl-C to stop" in banner
        assert ("elements from atspi" in banner) is not bool(flags)
        xdotool(display, "mousemove", str(save[0]), str(save[1]), "click", "3")
        line = process.stdout.readline()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)  # nothing keeps the process alive
    finally:
        process.kill()
        process.wait(10)
    assert process.returncode == 0, err
    assert f"right_click ({save[0]}, {save[1]})" in line
    assert ("on push button 'Save'" in line) is not bool(flags)
    assert "recorded 1 events (1 right_click)" in out
