"""Classifying key presses: typing, buffer edits, hotkeys and named keys."""

from __future__ import annotations

import pytest

from viewfinder.recorder import KeyStroke, classify, parse_chord


def test_characters_type_and_hotkeys_do_not() -> None:
    assert classify("a", "a") == KeyStroke("char", char="a")
    assert classify("A", "A", ["shift"]) == KeyStroke("char", char="A")
    assert classify("space", " ") == KeyStroke("char", char=" ")
    assert classify("s", "s", ["ctrl"]) == KeyStroke("key", keys=("ctrl", "s"))
    assert classify("s", "S", ["shift", "ctrl"]) == KeyStroke("key", keys=("ctrl", "shift", "s"))
    assert classify("Tab", None, ["alt"]) == KeyStroke("key", keys=("alt", "Tab"))
    assert classify("Tab", None, ["shift"]) == KeyStroke("key", keys=("shift", "Tab"))
    assert classify("BackSpace", None) == KeyStroke("backspace")
    assert classify("KP_Enter", None) == KeyStroke("key", keys=("Return",))
    assert classify("Prior", None) == KeyStroke("key", keys=("Page_Up",))
    for modifier in ("Shift_L", "Control_R", "Alt_L", "Super_L", "Caps_Lock", "ISO_Level3_Shift"):
        assert classify(modifier, None) == KeyStroke("modifier")


def test_chords_as_programs_write_them() -> None:
    assert parse_chord("ctrl+s") == KeyStroke("key", keys=("ctrl", "s"))
    assert parse_chord("Control+Shift+T") == KeyStroke("key", keys=("ctrl", "shift", "t"))
    assert parse_chord(["cmd", "space"]) == KeyStroke("key", keys=("super", "space"))
    assert parse_chord("enter") == KeyStroke("key", keys=("Return",))
    assert parse_chord("f5") == KeyStroke("key", keys=("F5",))
    assert parse_chord("a") == KeyStroke("char", char="a")
    assert parse_chord("shift+a") == KeyStroke("char", char="A")
    assert parse_chord("+") == KeyStroke("char", char="+")
    assert parse_chord("shift+1") == KeyStroke("key", keys=("shift", "1"))
    with pytest.raises(ValueError, match="empty key chord"):
        parse_chord("")
    with pytest.raises(ValueError, match="not a modifier"):
        parse_chord("banana+s")


def test_shift_tab_keysym_reads_as_tab_whatever_was_imported_before() -> None:
    import subprocess
    import sys

    # A fresh interpreter that imports only the recorder: no other module loads keysym groups.
    code = (
        "from viewfinder.recorder.keymap import keysym_name; "
        "from viewfinder.recorder.keys import key_name; "
        "print(key_name(keysym_name(0xFE20)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "Tab"
