"""Key names as Events carry them (X keysym style) -> what ``Input.dispatchKeyEvent`` needs.

An Event's chord is a list like ``["ctrl", "s"]`` or ``["Return"]``. A page sees a
key through its DOM ``key`` and ``code``, and Chromium's editing behaviour (Enter
submits, Backspace deletes, Tab moves focus) hangs on ``windowsVirtualKeyCode``; keys
that produce a character also need its ``text``. This table supplies all of them for
a US layout.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from viewfinder.core import ActionError


@dataclass(frozen=True)
class KeyDefinition:
    """One key: DOM ``key`` and ``code``, Windows virtual key code, and typed ``text``."""

    key: str
    code: str
    key_code: int
    text: str = ""
    #: CDP modifier bit when this key is a modifier: Alt=1, Ctrl=2, Meta=4, Shift=8.
    modifier: int = 0
    #: What the key produces with Shift held (letters, digits, punctuation).
    shifted: str = ""
    #: True when the name meant the shifted character ("A", "?"): Shift is pressed too.
    needs_shift: bool = False


ALT, CTRL, META, SHIFT = 1, 2, 4, 8

_MODIFIERS = {
    "alt": KeyDefinition("Alt", "AltLeft", 18, modifier=ALT),
    "ctrl": KeyDefinition("Control", "ControlLeft", 17, modifier=CTRL),
    "meta": KeyDefinition("Meta", "MetaLeft", 91, modifier=META),
    "shift": KeyDefinition("Shift", "ShiftLeft", 16, modifier=SHIFT),
}
_MODIFIER_ALIASES = {
    "alt": "alt",
    "alt_l": "alt",
    "alt_r": "alt",
    "option": "alt",
    "opt": "alt",
    "ctrl": "ctrl",
    "control": "ctrl",
    "control_l": "ctrl",
    "control_r": "ctrl",
    "ctl": "ctrl",
    "lctrl": "ctrl",
    "rctrl": "ctrl",
    "meta": "meta",
    "super": "meta",
    "super_l": "meta",
    "super_r": "meta",
    "cmd": "meta",
    "command": "meta",
    "win": "meta",
    "windows": "meta",
    "meta_l": "meta",
    "meta_r": "meta",
    "shift": "shift",
    "shift_l": "shift",
    "shift_r": "shift",
    "lshift": "shift",
    "rshift": "shift",
}

_NAMED = {
    "enter": KeyDefinition("Enter", "Enter", 13, "\r"),
    "tab": KeyDefinition("Tab", "Tab", 9),
    "backspace": KeyDefinition("Backspace", "Backspace", 8),
    "escape": KeyDefinition("Escape", "Escape", 27),
    "delete": KeyDefinition("Delete", "Delete", 46),
    "insert": KeyDefinition("Insert", "Insert", 45),
    "home": KeyDefinition("Home", "Home", 36),
    "end": KeyDefinition("End", "End", 35),
    "pageup": KeyDefinition("PageUp", "PageUp", 33),
    "pagedown": KeyDefinition("PageDown", "PageDown", 34),
    "left": KeyDefinition("ArrowLeft", "ArrowLeft", 37),
    "up": KeyDefinition("ArrowUp", "ArrowUp", 38),
    "right": KeyDefinition("ArrowRight", "ArrowRight", 39),
    "down": KeyDefinition("ArrowDown", "ArrowDown", 40),
    "space": KeyDefinition(" ", "Space", 32, " "),
    "capslock": KeyDefinition("CapsLock", "CapsLock", 20),
    "numlock": KeyDefinition("NumLock", "NumLock", 144),
    "scrolllock": KeyDefinition("ScrollLock", "ScrollLock", 145),
    "contextmenu": KeyDefinition("ContextMenu", "ContextMenu", 93),
    "printscreen": KeyDefinition("PrintScreen", "PrintScreen", 44),
    "altgraph": KeyDefinition("AltGraph", "AltRight", 225),
    **{f"f{n}": KeyDefinition(f"F{n}", f"F{n}", 111 + n) for n in range(1, 13)},
}
# X keysym names and DOM names people also write, folded to the names above.
_NAMED_ALIASES = {
    "return": "enter",
    "kp_enter": "enter",
    "iso_left_tab": "tab",
    "back_space": "backspace",
    "bksp": "backspace",
    "esc": "escape",
    "del": "delete",
    "ins": "insert",
    "prior": "pageup",
    "page_up": "pageup",
    "pgup": "pageup",
    "next": "pagedown",
    "page_down": "pagedown",
    "pgdn": "pagedown",
    "arrowleft": "left",
    "arrowup": "up",
    "arrowright": "right",
    "arrowdown": "down",
    "caps_lock": "capslock",
    "num_lock": "numlock",
    "scroll_lock": "scrolllock",
    "menu": "contextmenu",
    "print": "printscreen",
    "prtsc": "printscreen",
    "altgr": "altgraph",
    "iso_level3_shift": "altgraph",
    "spacebar": "space",
    " ": "space",
}

# US punctuation: character -> (code, key code, shifted character).
_PUNCTUATION = {
    "-": ("Minus", 189, "_"),
    "=": ("Equal", 187, "+"),
    ",": ("Comma", 188, "<"),
    ".": ("Period", 190, ">"),
    "/": ("Slash", 191, "?"),
    ";": ("Semicolon", 186, ":"),
    "'": ("Quote", 222, '"'),
    "[": ("BracketLeft", 219, "{"),
    "]": ("BracketRight", 221, "}"),
    "\\": ("Backslash", 220, "|"),
    "`": ("Backquote", 192, "~"),
}
_PUNCTUATION_NAMES = {
    "minus": "-",
    "equal": "=",
    "comma": ",",
    "period": ".",
    "slash": "/",
    "semicolon": ";",
    "apostrophe": "'",
    "bracketleft": "[",
    "bracketright": "]",
    "backslash": "\\",
    "grave": "`",
    "plus": "+",
}
_DIGIT_SHIFTED = ")!@#$%^&*("


def modifier_for(name: str) -> KeyDefinition | None:
    """The modifier key ``name`` stands for (``ctrl``, ``Shift_L``, ``cmd``...), or None."""
    alias = _MODIFIER_ALIASES.get(name.lower())
    return _MODIFIERS[alias] if alias else None


def key_for(name: str) -> KeyDefinition:
    """The key a chord element names: a modifier, a named key, or one character."""
    modifier = modifier_for(name)
    if modifier is not None:
        return modifier
    lowered = name.lower()
    named = _NAMED_ALIASES.get(lowered, lowered)
    if named in _NAMED:
        return _NAMED[named]
    char = _PUNCTUATION_NAMES.get(lowered, name)
    if len(char) == 1:
        return _character_key(char)
    raise ActionError(
        f"unknown key {name!r}; use a character, a modifier (ctrl, alt, shift, super) or a "
        "named key such as Return, Tab, Escape, BackSpace, Delete, Home, End, Page_Up, "
        "Left, Up, space or F1-F12"
    )


def _character_key(char: str) -> KeyDefinition:
    if char.isascii() and char.isalpha():
        lower = char.lower()
        definition = KeyDefinition(
            lower, f"Key{lower.upper()}", ord(lower.upper()), lower, shifted=lower.upper()
        )
        return definition if char.islower() else _with_shift(definition)
    if char.isascii() and char.isdigit():
        return KeyDefinition(
            char, f"Digit{char}", ord(char), char, shifted=_DIGIT_SHIFTED[int(char)]
        )
    if char in _PUNCTUATION:
        code, key_code, shifted = _PUNCTUATION[char]
        return KeyDefinition(char, code, key_code, char, shifted=shifted)
    for base, (code, key_code, shifted) in _PUNCTUATION.items():
        if char == shifted:
            return _with_shift(KeyDefinition(base, code, key_code, base, shifted=shifted))
    if char in _DIGIT_SHIFTED:
        digit = str(_DIGIT_SHIFTED.index(char))
        return _with_shift(KeyDefinition(digit, f"Digit{digit}", ord(digit), digit, shifted=char))
    # Any other character: no physical key on a US layout, but the page still gets it.
    return KeyDefinition(char, "", 0, char)


def _with_shift(definition: KeyDefinition) -> KeyDefinition:
    # An upper-case letter or a shifted symbol named on its own is typed with Shift held.
    return replace(definition, needs_shift=True)


def typed(definition: KeyDefinition, modifiers: int) -> tuple[str, str]:
    """``(key, text)`` the key produces with ``modifiers`` held; text is "" when Ctrl,
    Alt or Meta turn it into a shortcut instead of typing."""
    if definition.modifier:
        return definition.key, ""
    shift = bool(modifiers & SHIFT) or definition.needs_shift
    key = definition.shifted if shift and definition.shifted else definition.key
    if modifiers & (CTRL | ALT | META) or not definition.text:
        return key, ""
    return key, key if definition.shifted else definition.text
