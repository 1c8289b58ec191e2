"""What a key press means for a recording: a typed character, a buffer edit, or a key.

Key names follow X keysym spelling as xdotool and the computer-use tool take them
(``Return``, ``Escape``, ``BackSpace``, ``Page_Down``, ``F5``, ``a``); chords join them
with ``+`` in a fixed modifier order: ``ctrl+alt+shift+super+<key>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

#: The order modifiers are written in a chord.
MODIFIER_ORDER = ("ctrl", "alt", "shift", "super")
#: Modifiers that turn a character into a hotkey (Shift only picks the character).
HOTKEY_MODIFIERS = frozenset({"ctrl", "alt", "super"})

_MODIFIER_NAMES = {
    "ctrl": "ctrl",
    "control": "ctrl",
    "control_l": "ctrl",
    "control_r": "ctrl",
    "lctrl": "ctrl",
    "rctrl": "ctrl",
    "alt": "alt",
    "alt_l": "alt",
    "alt_r": "alt",
    "meta_l": "alt",
    "meta_r": "alt",
    "option": "alt",
    "opt": "alt",
    "shift": "shift",
    "shift_l": "shift",
    "shift_r": "shift",
    "lshift": "shift",
    "rshift": "shift",
    "super": "super",
    "super_l": "super",
    "super_r": "super",
    "hyper_l": "super",
    "hyper_r": "super",
    "cmd": "super",
    "command": "super",
    "meta": "super",
    "win": "super",
    "windows": "super",
}
#: Keys that only change other keys; pressed alone they are not an action.
_LOCK_AND_SHIFT_KEYS = frozenset(
    {"caps_lock", "num_lock", "scroll_lock", "shift_lock", "iso_level3_shift", "mode_switch"}
)

_KEY_NAMES = {
    "enter": "Return",
    "return": "Return",
    "kp_enter": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "iso_left_tab": "Tab",
    "backspace": "BackSpace",
    "bksp": "BackSpace",
    "del": "Delete",
    "delete": "Delete",
    "ins": "Insert",
    "insert": "Insert",
    "space": "space",
    "spacebar": "space",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "arrowup": "Up",
    "arrowdown": "Down",
    "arrowleft": "Left",
    "arrowright": "Right",
    "home": "Home",
    "end": "End",
    "pgup": "Page_Up",
    "pageup": "Page_Up",
    "page_up": "Page_Up",
    "prior": "Page_Up",
    "pgdn": "Page_Down",
    "pagedown": "Page_Down",
    "page_down": "Page_Down",
    "next": "Page_Down",
    "menu": "Menu",
    "print": "Print",
    "pause": "Pause",
}
#: Characters ``type()`` turns into keys, as a person's Enter or Tab would be.
_CONTROL_CHARS = {"\n": "Return", "\r": "Return", "\t": "Tab", "\x1b": "Escape", "\b": "BackSpace"}

StrokeKind = Literal["char", "backspace", "key", "modifier"]


@dataclass(frozen=True)
class KeyStroke:
    """One key press, classified.

    ``char``: a character that extends the typing burst (space included);
    ``backspace``: removes the burst's last character; ``key``: a key event (``keys`` is
    the chord); ``modifier``: a modifier pressed on its own, which records nothing.
    """

    kind: StrokeKind
    keys: tuple[str, ...] = ()
    char: str | None = None


def modifier_name(name: str) -> str | None:
    """``ctrl``, ``alt``, ``shift`` or ``super`` for a modifier key name, else None."""
    return _MODIFIER_NAMES.get(name.strip().lower())


def key_name(name: str) -> str:
    """The canonical spelling of a key name (``enter`` -> ``Return``, ``f5`` -> ``F5``)."""
    if len(name) == 1:
        return name
    cleaned = name.strip()
    lowered = cleaned.lower()
    if lowered in _KEY_NAMES:
        return _KEY_NAMES[lowered]
    if lowered[:1] == "f" and lowered[1:].isdigit():
        return f"F{int(lowered[1:])}"
    return cleaned


def ordered_modifiers(modifiers: Iterable[str]) -> tuple[str, ...]:
    """Modifier names normalised and in chord order, each once."""
    names = set()
    for modifier in modifiers:
        normal = modifier_name(modifier)
        if normal is None:
            raise ValueError(f"{modifier!r} is not a modifier; use ctrl, alt, shift or super")
        names.add(normal)
    return tuple(name for name in MODIFIER_ORDER if name in names)


def classify(name: str, char: str | None, modifiers: Iterable[str] = ()) -> KeyStroke:
    """Classify a press of key ``name`` that would type ``char`` (None: types nothing).

    ``modifiers`` are the modifiers held. A character typed with Ctrl, Alt or Super held
    is a hotkey, not typing; its chord uses the unshifted key (``ctrl+shift+s``).
    """
    held = ordered_modifiers(modifiers)
    if modifier_name(name) is not None or name.strip().lower() in _LOCK_AND_SHIFT_KEYS:
        return KeyStroke("modifier")
    base = key_name(name)
    if HOTKEY_MODIFIERS.intersection(held):
        if len(base) == 1 and base.isalpha() and base.isupper():
            base = base.lower()
            held = ordered_modifiers([*held, "shift"])
        return KeyStroke("key", keys=(*held, base))
    if char is not None and char.isprintable():
        return KeyStroke("char", char=char)
    if base == "BackSpace":
        return KeyStroke("backspace")
    return KeyStroke("key", keys=(*held, base))


def parse_chord(chord: str | Sequence[str]) -> KeyStroke:
    """Classify a chord as a program names it: ``"ctrl+s"``, ``"Return"``, ``["shift", "a"]``."""
    if isinstance(chord, str):
        parts = [part for part in chord.split("+") if part] or (["+"] if chord else [])
    else:
        parts = [str(part) for part in chord]
    if not parts:
        raise ValueError("an empty key chord; name a key such as 'Return' or 'ctrl+s'")
    *modifiers, last = parts
    held = ordered_modifiers(modifiers)
    name = key_name(last)
    char = _char_of(name, "shift" in held)
    if char is not None and "shift" in held and not HOTKEY_MODIFIERS.intersection(held):
        held = tuple(m for m in held if m != "shift")
    return classify(name, char, held)


def stroke_for_char(char: str) -> KeyStroke:
    """What typing ``char`` is: itself, or Return/Tab/Escape/BackSpace for control chars."""
    if char in _CONTROL_CHARS:
        name = _CONTROL_CHARS[char]
        return KeyStroke("backspace") if name == "BackSpace" else KeyStroke("key", keys=(name,))
    if not char.isprintable():
        raise ValueError(f"cannot type control character {char!r}; record it as a key chord")
    return KeyStroke("char", char=char)


def _char_of(name: str, shifted: bool) -> str | None:
    if name == "space":
        return " "
    if len(name) != 1 or not name.isprintable():
        return None
    if shifted:
        # Only letters have a layout-independent shifted form.
        return name.upper() if name.isalpha() else None
    return name
