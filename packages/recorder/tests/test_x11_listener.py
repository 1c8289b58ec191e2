"""The X RECORD listener turns raw X key and button presses into the right actions."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from viewfinder.core import DisplayGoneError
from viewfinder.recorder import PairingSettings, Recorder, X11RecordInput
from viewfinder.recorder.keymap import keysym_char, keysym_name
from viewfinder.xvfb import Display


def test_keysyms_name_keys_and_type_characters() -> None:
    assert (keysym_name(0xFF0D), keysym_name(0x61), keysym_name(0x2F)) == ("Return", "a", "slash")
    assert keysym_name(0xFF55) == "Page_Up"
    assert (keysym_char(0x41), keysym_char(0xE9), keysym_char(0x20AC | 0x01000000)) == (
        "A",
        "é",
        "€",
    )
    assert (keysym_char(0xFFB7), keysym_char(0xFF0D)) == ("7", None)


def test_modifiers_caps_lock_hotkeys_and_wheels_from_real_x_input(
    tmp_path: Path,
    display: Display,
    xdotool: Callable[..., None],
    wait_until: Callable[..., Any],
) -> None:
    folder = tmp_path / "s"
    settings = PairingSettings(typing_pause=60, scroll_pause=60)
    source = X11RecordInput(display.name)
    recorder = Recorder(
        folder,
        "xvfb",
        backend_options={"display": display.name},
        input_source=source,
        settings=settings,
    )
    with recorder:

        def written(count: int) -> None:
            wait_until(lambda: recorder.events >= count, f"{count} events")

        xdotool("type", "Hi! ok")
        xdotool("key", "Caps_Lock", "a", "b", "Caps_Lock", "shift+Tab")
        written(2)
        xdotool("key", "ctrl+shift+t", "alt+F4", "super+e", "ctrl+Page_Down")
        written(6)
        xdotool("mousemove", "200", "150", "keydown", "ctrl", "click", "1", "keyup", "ctrl")
        written(7)
        xdotool("click", "7", "click", "7", "click", "6")
        xdotool("mousemove", "20", "30", "click", "2")
        written(10)
        assert source.events_seen >= 20
    lines = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]
    assert [
        (line["kind"], line.get("text") or line.get("keys") or line.get("position"))
        for line in lines
    ] == [
        ("type", "Hi! okAB"),
        ("key", ["shift", "Tab"]),
        ("key", ["ctrl", "shift", "t"]),
        ("key", ["alt", "F4"]),
        ("key", ["super", "e"]),
        ("key", ["ctrl", "Page_Down"]),
        ("click", {"x": 200, "y": 150}),
        ("scroll", {"x": 200, "y": 150}),
        ("scroll", {"x": 200, "y": 150}),
        ("middle_click", {"x": 20, "y": 30}),
    ]
    assert lines[6]["modifiers"] == ["ctrl"]
    assert (lines[7]["scroll_dx"], lines[8]["scroll_dx"]) == (2, -1)


def test_listening_on_a_display_that_is_not_there_is_a_clear_error(tmp_path: Path) -> None:
    source = X11RecordInput(":987")
    with pytest.raises(DisplayGoneError, match="cannot listen for input on X display :987"):
        source.start(Recorder(tmp_path / "s"))
