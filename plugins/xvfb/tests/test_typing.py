"""Typing text and naming keys, checked by real Tk apps reporting what they received.

Characters off the keyboard map go through a handful of spare keycodes that are
remapped as the text goes on; the app must still read every character as typed, and
a long text must arrive whole.
"""

from __future__ import annotations

import random

import pytest

from viewfinder.core import ActionError
from viewfinder.xvfb.keys import split_chord

CONTROL = 0x4
ADDRESS = "東京都渋谷区神南一丁目十九番十一号の会議室で打ち合わせをします"


def _text_after(display, probe, text: str) -> dict:
    display.input.type(text)
    display.input.key("F12")
    return probe.wait_for(lambda e: e["type"] == "text", "the Text's content", timeout=120)


def test_more_characters_than_spare_keycodes_arrive_in_order(display, tk_probe) -> None:
    display.input.type(ADDRESS)
    tk_probe.wait_for(lambda e: e["type"] == "entry" and e["text"] == ADDRESS, "the address")
    keys = "".join(e["char"] for e in tk_probe.events if e["type"] == "key")
    assert keys == ADDRESS


def test_a_long_text_of_distinct_characters_arrives_exactly(display, tk_text) -> None:
    chooser = random.Random(27)
    kanji = "".join(chr(chooser.randint(0x4E00, 0x4FFF)) for _ in range(1500))
    text = "\n".join(kanji[start : start + 40] for start in range(0, len(kanji), 40))
    text = ADDRESS + "\n" + text + "\n" + ADDRESS * 3
    report = _text_after(display, tk_text, text)
    assert report["text"] == text
    assert report["keys"] == text.replace("\n", "\r")


def test_a_long_text_arrives_whole(display, tk_text) -> None:
    line = "The quick brown fox jumps over the lazy dog; Grüße, 東京 ½ €\n"
    text = (line * (20_000 // len(line) + 1))[:20_000]
    assert _text_after(display, tk_text, text)["text"] == text


def test_typing_twice_reuses_keycodes_safely(display, tk_text) -> None:
    first = "".join(chr(0x3042 + i) for i in range(40))  # hiragana
    second = "".join(chr(0x30A2 + i) for i in range(40))  # katakana, on the same keycodes
    display.input.type(first)
    assert _text_after(display, tk_text, second)["text"] == first + second


def test_ctrl_plus_presses_the_plus_key(display, tk_probe) -> None:
    display.input.key("ctrl++")
    event = tk_probe.wait_for(lambda e: e["type"] == "key" and e["keysym"] == "plus", "ctrl++")
    assert event["state"] & CONTROL


@pytest.mark.parametrize(
    ("name", "keysym"),
    [
        ("XF86AudioMute", "XF86AudioMute"),
        ("XF86AudioRaiseVolume", "XF86AudioRaiseVolume"),
        ("XF86Back", "XF86Back"),
        ("NUMLOCK", "Num_Lock"),
        ("KP_Enter", "KP_Enter"),
        ("PRINTSCREEN", "Print"),
    ],
)
def test_named_keys_arrive_as_their_keysym(display, tk_probe, name: str, keysym: str) -> None:
    display.input.key(name)
    tk_probe.wait_for(lambda e: e["type"] == "key" and e["keysym"] == keysym, name)


@pytest.mark.parametrize(
    ("chord", "names"),
    [
        ("ctrl+s", ["ctrl", "s"]),
        ("ctrl++", ["ctrl", "+"]),
        ("ctrl+shift++", ["ctrl", "shift", "+"]),
        ("+", ["+"]),
        ("ctrl+plus", ["ctrl", "plus"]),
    ],
)
def test_chords_split_on_plus(chord: str, names: list[str]) -> None:
    assert split_chord(chord) == names


@pytest.mark.parametrize("chord", ["ctrl+", "+ctrl", "", "ctrl+++"])
def test_a_lone_plus_in_a_chord_is_an_error(chord: str) -> None:
    with pytest.raises(ActionError, match="key"):
        split_chord(chord)


def test_keys_never_repeat_and_autorepeat_is_back_afterwards(display, tk_probe) -> None:
    # a loaded server that stalls between a press and its release would repeat the key
    conn = display.input._conn
    assert conn.get_keyboard_control().global_auto_repeat
    seen = []
    original = conn.change_keyboard_control

    def spy(**changes):
        seen.append(changes.get("auto_repeat_mode"))
        return original(**changes)

    conn.change_keyboard_control = spy
    try:
        display.input.type("ab")
        display.input.key("ctrl+c")
    finally:
        del conn.change_keyboard_control
    tk_probe.wait_for(lambda e: e["type"] == "key" and e["keysym"] == "c", "ctrl+c")
    # off while typing, on again after, each time
    assert seen == [0, 1, 0, 1]
    assert conn.get_keyboard_control().global_auto_repeat
