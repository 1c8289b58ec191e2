"""End to end: a real Tk form on a real Xvfb, real X input (xdotool), the X RECORD listener.

Each step waits until the live frame shows the previous action's result, as a person
would look before acting again; then the manifest must hold exactly the expected events
and the frozen frames must prove the pairing pixel by pixel.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from viewfinder.core import EventKind
from viewfinder.recorder import PairingSettings, Recorder, X11RecordInput, load_session
from viewfinder.xvfb import Display


def manifest_lines(folder: Path) -> list[dict[str, object]]:
    path = folder / "manifest.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_session_on_a_tk_form_pairs_every_action_with_the_frame_before_it(
    tmp_path: Path,
    display: Display,
    form: Any,
    xdotool: Callable[..., None],
    wait_until: Callable[..., Any],
) -> None:
    rgb, GREY = form.rgb, form.GREY
    folder = tmp_path / "session"
    recorder = Recorder(
        folder,
        "xvfb",
        backend_options={"display": display.name},
        input_source=X11RecordInput(display.name),
        interval=0.2,
        settings=PairingSettings(typing_pause=30.0),  # the burst must end on the next key
    )

    def current() -> Image.Image:
        return form.read(recorder.layout.current)

    def shows(what: str, check: Callable[[Image.Image], bool]) -> None:
        wait_until(lambda: check(current()), f"the live frame to show {what}")

    def lines(count: int) -> None:
        wait_until(lambda: len(manifest_lines(folder)) == count, f"{count} manifest lines")

    with recorder:
        shows("the form", lambda image: form.patch(image, "go") == GREY)
        entry = form.centre("entry")
        xdotool("mousemove", str(entry[0]), str(entry[1]), "click", "1")
        lines(1)
        xdotool("type", "hellp")
        xdotool("key", "BackSpace")
        xdotool("type", "o")
        shows("the typed text", lambda image: form.entry_ink(image) > 40)
        assert recorder.pending == "type"
        xdotool("key", "ctrl+s")
        lines(3)
        shows("the hotkey's yellow", lambda image: form.patch(image, "hotkey") == rgb("#ff0"))
        xdotool("key", "Return")
        lines(4)
        shows("Enter's red", lambda image: form.patch(image, "enter") == rgb("#f00"))
        go = form.centre("go")
        xdotool("mousemove", str(go[0]), str(go[1]), "click", "1")
        lines(5)
        shows("Go's blue", lambda image: form.patch(image, "go") == rgb("#00f"))
        listbox = form.centre("listbox")
        xdotool("mousemove", str(listbox[0]), str(listbox[1]))
        xdotool("click", "5", "click", "5", "click", "5")
        lines(6)
        shows("the scrolled list", lambda image: form.top_row(image) > 0)
        xdotool("click", "--repeat", "2", "--delay", "80", "1")
        lines(7)
        shows("the double click's magenta", lambda image: form.patch(image, "double") != GREY)
        neutral = form.centre("neutral")
        xdotool("mousemove", str(neutral[0]), str(neutral[1]), "click", "1")
        lines(8)

    events = [
        (line["kind"], line.get("text") or line.get("keys") or "")
        for line in manifest_lines(folder)
    ]
    assert events == [
        ("click", ""),
        ("type", "hello"),
        ("key", ["ctrl", "s"]),
        ("key", ["Return"]),
        ("click", ""),
        ("scroll", ""),
        ("double_click", ""),
        ("click", ""),
    ]
    trajectory = load_session(folder)
    steps = trajectory.steps
    assert [step.event.screenshot for step in steps] == [f"screenshots/{n}.png" for n in range(8)]
    assert steps[0].event.position is not None
    assert steps[0].event.position.as_tuple() == entry
    assert steps[4].event.position is not None and steps[4].event.position.as_tuple() == go
    scroll = steps[5].event
    assert scroll.kind is EventKind.SCROLL and (scroll.scroll_dx, scroll.scroll_dy) == (0, 3)
    assert steps[6].event.position is not None
    assert steps[6].event.position.as_tuple() == listbox

    frames = [step.frame.to_pil().convert("RGB") for step in steps if step.frame is not None]
    assert len(frames) == 8
    # The click on the entry: before it, the entry is empty.
    assert form.entry_ink(frames[0]) == 0
    # The type event's frame is the one from before typing: the entry is still empty...
    assert form.entry_ink(frames[1]) == 0
    assert (folder / "screenshots" / "pretyping_screenshot.png").read_bytes() == (
        folder / "screenshots" / "1.png"
    ).read_bytes()
    # ...and the next event's frame shows the typed text, before Ctrl+S acted.
    assert form.entry_ink(frames[2]) > 40
    assert form.patch(frames[2], "hotkey") == GREY
    assert form.patch(frames[3], "hotkey") == rgb("#ff0")
    assert form.patch(frames[3], "enter") == GREY
    # The click on Go: its frame shows the state before the click, the next one after.
    assert form.patch(frames[4], "enter") == rgb("#f00")
    assert form.patch(frames[4], "go") == GREY
    assert form.patch(frames[5], "go") == rgb("#00f")
    # The scroll: before it the list starts at row 0; the next frame shows it scrolled.
    assert form.top_row(frames[5]) == 0
    assert form.top_row(frames[6]) > 0
    assert form.patch(frames[6], "double") == GREY
    assert form.patch(frames[7], "double") == rgb("#f0f")


def test_act_records_the_action_then_performs_it_on_the_display(
    tmp_path: Path, display: Display, form: Any, wait_until: Callable[..., Any]
) -> None:
    from viewfinder.core import Event, Point

    folder = tmp_path / "session"
    go = form.centre("go")
    with Recorder(
        folder, "xvfb", backend_options={"display": display.name}, interval=0.05
    ) as recorder:
        recorder.act(Event(kind=EventKind.CLICK, position=Point(x=go[0], y=go[1])))
        wait_until(
            lambda: form.patch(form.read(recorder.layout.current), "go") == form.rgb("#00f"),
            "Go's blue in the live frame",
        )
        recorder.key("F2")
    steps = load_session(folder).steps
    assert [step.event.kind for step in steps] == [EventKind.CLICK, EventKind.KEY]
    frames = [step.frame.to_pil() for step in steps if step.frame is not None]
    assert form.patch(frames[0], "go") == form.GREY  # recorded before it was performed
    assert form.patch(frames[1], "go") == form.rgb("#00f")
