"""Key names -> key definitions (pure logic; the browser tests cover their effect)."""

from __future__ import annotations

import pytest

from viewfinder.cdp.keys import ALT, CTRL, META, SHIFT, key_for, modifier_for, typed
from viewfinder.cdp.page_input import modifier_mask
from viewfinder.core import ActionError


@pytest.mark.parametrize(
    ("name", "key", "code", "key_code"),
    [
        ("Return", "Enter", "Enter", 13),
        ("enter", "Enter", "Enter", 13),
        ("KP_Enter", "Enter", "Enter", 13),
        ("Tab", "Tab", "Tab", 9),
        ("Escape", "Escape", "Escape", 27),
        ("BackSpace", "Backspace", "Backspace", 8),
        ("Delete", "Delete", "Delete", 46),
        ("Left", "ArrowLeft", "ArrowLeft", 37),
        ("ArrowDown", "ArrowDown", "ArrowDown", 40),
        ("Page_Down", "PageDown", "PageDown", 34),
        ("F5", "F5", "F5", 116),
        ("space", " ", "Space", 32),
        ("a", "a", "KeyA", 65),
        ("7", "7", "Digit7", 55),
        ("minus", "-", "Minus", 189),
    ],
)
def test_named_keys(name: str, key: str, code: str, key_code: int) -> None:
    definition = key_for(name)
    assert (definition.key, definition.code, definition.key_code) == (key, code, key_code)


def test_modifiers_and_their_bits() -> None:
    assert modifier_mask(["ctrl", "shift"]) == CTRL | SHIFT
    assert modifier_mask(["alt", "super"]) == ALT | META
    assert modifier_for("Control_L") is not None
    assert modifier_for("cmd") == modifier_for("meta")
    assert modifier_for("a") is None
    with pytest.raises(ActionError, match="not a modifier"):
        modifier_mask(["a"])


def test_what_a_key_types() -> None:
    assert typed(key_for("a"), 0) == ("a", "a")
    assert typed(key_for("a"), SHIFT) == ("A", "A")
    assert typed(key_for("A"), 0) == ("A", "A")
    assert key_for("A").needs_shift
    assert typed(key_for("a"), CTRL) == ("a", "")
    assert typed(key_for("Return"), 0) == ("Enter", "\r")
    assert typed(key_for("Tab"), 0) == ("Tab", "")
    assert typed(key_for("?"), 0) == ("?", "?")
    assert key_for("?").code == "Slash"
    assert typed(key_for("1"), SHIFT) == ("!", "!")
    assert typed(key_for("é"), 0) == ("é", "é")


def test_an_unknown_key_name_says_what_is_known() -> None:
    with pytest.raises(ActionError, match="Return"):
        key_for("NoSuchKey")
