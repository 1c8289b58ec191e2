"""A key name that one input path takes, the other takes too.

Events and cache files name keys once; the same chord is pressed on an X display (the
xvfb backend, X keysyms) and in a page (the cdp backend, DOM keys). A name that works
on one and is an error on the other would make a trajectory replayable on one screen
only.
"""

from __future__ import annotations

import pytest

from viewfinder.cdp import keys as cdp_keys
from viewfinder.xvfb import keys as xvfb_keys

CDP_NAMES = sorted(
    {
        *cdp_keys._MODIFIER_ALIASES,
        *cdp_keys._NAMED,
        *cdp_keys._NAMED_ALIASES,
        *cdp_keys._PUNCTUATION_NAMES,
    }
    - {" "}
)
XVFB_NAMES = sorted(xvfb_keys.ALIASES)
#: Names people write, in both spellings: X keysyms and DOM key names.
COMMON = [
    "Return", "Enter", "KP_Enter", "Tab", "Escape", "BackSpace", "Backspace", "Delete",
    "Insert", "Home", "End", "Prior", "Next", "Page_Up", "PageUp", "Page_Down",
    "PageDown", "Up", "ArrowUp", "Down", "ArrowDown", "Left", "ArrowLeft", "Right",
    "ArrowRight", "F1", "F12", "space", "Control_L", "Shift_R", "Alt_L", "Super_L",
    "Caps_Lock", "Menu", "a", "A", "7", "slash", "/", "minus", "-", "plus", "+",
]  # fmt: skip


@pytest.mark.parametrize("name", CDP_NAMES)
def test_names_the_page_takes_are_taken_on_an_x_display(name: str) -> None:
    assert xvfb_keys.keysym_for_name(name)


@pytest.mark.parametrize("name", XVFB_NAMES)
def test_names_an_x_display_takes_are_taken_in_a_page(name: str) -> None:
    assert cdp_keys.key_for(name)


@pytest.mark.parametrize("name", COMMON)
def test_common_spellings_work_on_both(name: str) -> None:
    assert xvfb_keys.keysym_for_name(name)
    assert cdp_keys.key_for(name)


@pytest.mark.parametrize("name", ["hyperdrive", "ctrl+"])
def test_an_unknown_name_is_the_same_error_on_both(name: str) -> None:
    from viewfinder.core import ActionError

    with pytest.raises(ActionError, match="unknown key"):
        xvfb_keys.keysym_for_name(name)
    with pytest.raises(ActionError, match="unknown key"):
        cdp_keys.key_for(name)


def test_an_empty_name_is_an_error_on_both() -> None:
    from viewfinder.core import ActionError

    with pytest.raises(ActionError):
        xvfb_keys.keysym_for_name("")
    with pytest.raises(ActionError):
        cdp_keys.key_for("")


#: The key names OpenAI's computer-use sample computers translate (CUA key names, in
#: the upper case the model writes them) and the xdotool names Anthropic's computer
#: tool documents, with the chords both are given as.
OPENAI_KEYS = [
    "/", "\\", "ALT", "ARROWDOWN", "ARROWLEFT", "ARROWRIGHT", "ARROWUP", "BACKSPACE",
    "CAPSLOCK", "CMD", "CTRL", "DELETE", "END", "ENTER", "ESC", "HOME", "INSERT", "OPTION",
    "PAGEDOWN", "PAGEUP", "SHIFT", "SPACE", "SUPER", "TAB", "WIN", "NUMLOCK", "F1", "F12",
    "A", "z", "1", "PRINTSCREEN", "META", "RETURN", "ESCAPE", "UP", "DOWN", "LEFT", "RIGHT",
]  # fmt: skip
ANTHROPIC_KEYS = [
    "a", "Return", "alt+Tab", "ctrl+s", "Up", "KP_0", "KP_Enter", "Page_Down", "super",
    "ctrl+shift+t", "XF86AudioMute", "XF86AudioRaiseVolume", "XF86AudioLowerVolume",
    "XF86MonBrightnessUp", "XF86Back", "XF86Forward", "Print", "Scroll_Lock", "Num_Lock",
    "Pause", "F11", "ctrl++", "ctrl+minus", "shift+Tab", "Escape", "BackSpace", "Delete",
    "Home", "End", "Insert", "space", "Menu", "cmd+c",
]  # fmt: skip


@pytest.mark.parametrize("name", OPENAI_KEYS)
def test_openai_key_names_are_taken_without_an_added_shift(name: str) -> None:
    from viewfinder.desktop.actions import parse_action

    action = parse_action({"type": "keypress", "keys": ["CTRL", name]})
    assert action.keys[0] == "CTRL"
    pressed = xvfb_keys.keysym_for_name(action.keys[1])
    if name.isalpha() and len(name) == 1:  # the letter's key, lower case: no Shift
        assert pressed == ord(name.lower())


@pytest.mark.parametrize("chord", ANTHROPIC_KEYS)
def test_anthropic_key_chords_are_taken(chord: str) -> None:
    from viewfinder.desktop.actions import parse_action

    action = parse_action({"action": "key", "text": chord})
    assert all(xvfb_keys.keysym_for_name(name) for name in action.keys)
    if chord == "ctrl++":
        assert action.keys == ("ctrl", "+")
