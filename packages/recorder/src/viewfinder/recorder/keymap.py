"""Keycodes to what they type, as the X display maps them at the moment of a press.

python-xlib names keysyms; this module adds the characters they type (Latin-1, Unicode,
keypad), the modifier bits' names, and a :class:`Keymap` that the listener keeps in step
with the server (it applies every ``ChangeKeyboardMapping`` it records).
"""

from __future__ import annotations

from collections.abc import Sequence

from Xlib import XK, X
from Xlib.display import Display as XDisplay

_MOD_MASKS = (X.Mod1Mask, X.Mod2Mask, X.Mod3Mask, X.Mod4Mask, X.Mod5Mask)
_MODIFIER_KEYSYM_NAMES = {
    "Alt_L": "alt",
    "Alt_R": "alt",
    "Meta_L": "alt",
    "Meta_R": "alt",
    "Super_L": "super",
    "Super_R": "super",
    "Hyper_L": "super",
    "Hyper_R": "super",
}


def _keysym_names() -> dict[int, str]:
    # python-xlib knows only the latin1 and misc keysyms until a group is loaded; load
    # the ones real keymaps use (ISO_Left_Tab, dead keys, ...) so names never depend on
    # which other module happened to load them first.
    for group in ("xkb", "latin2", "latin3", "latin4", "greek", "cyrillic", "publishing"):
        XK.load_keysym_group(group)
    names: dict[int, str] = {}
    for attribute in sorted(dir(XK)):
        if attribute.startswith("XK_"):
            names.setdefault(getattr(XK, attribute), attribute[3:])
    return names


_NAMES = _keysym_names()


#: Keypad keysyms that type a character (with Num Lock on).
_KEYPAD_CHARS = {
    0xFF80: " ",
    0xFFAA: "*",
    0xFFAB: "+",
    0xFFAC: ",",
    0xFFAD: "-",
    0xFFAE: ".",
    0xFFAF: "/",
    0xFFBD: "=",
    **{0xFFB0 + digit: str(digit) for digit in range(10)},
}


def keysym_char(keysym: int) -> str | None:
    """The character a keysym types (Latin-1, Unicode and keypad keysyms), or None."""
    if 0x20 <= keysym <= 0x7E or 0xA0 <= keysym <= 0xFF:
        return chr(keysym)
    if 0x01000100 <= keysym <= 0x0110FFFF:
        return chr(keysym - 0x01000000)
    return _KEYPAD_CHARS.get(keysym)


def keysym_name(keysym: int) -> str:
    """The X name of a keysym (``Return``, ``a``, ``slash``), or its hex value."""
    name = _NAMES.get(keysym)
    if name is not None:
        return name
    char = keysym_char(keysym)
    return char if char is not None else f"0x{keysym:x}"


class Keymap:
    """Keycodes to keysyms and modifier bits to names, as the display maps them."""

    def __init__(self, conn: XDisplay) -> None:
        self.refresh(conn)

    def refresh(self, conn: XDisplay) -> None:
        info = conn.display.info
        self.first = info.min_keycode
        self.codes = conn.get_keyboard_mapping(self.first, info.max_keycode - self.first + 1)
        names: dict[int, str] = {}
        self.num_lock = 0
        for mask, keycodes in zip(_MOD_MASKS, conn.get_modifier_mapping()[3:], strict=True):
            for keycode in keycodes:
                keysym = keysym_name(self._keysym(keycode, 0))
                if keysym == "Num_Lock":
                    self.num_lock = mask
                name = _MODIFIER_KEYSYM_NAMES.get(keysym)
                if name is not None:
                    names.setdefault(mask, name)
        self.mod_names = names

    def apply_change(self, first_keycode: int, per_keycode: int, keysyms: Sequence[int]) -> None:
        """A ``ChangeKeyboardMapping`` request's new keysyms, as the server applied them."""
        codes = [list(row) for row in self.codes]
        for offset in range(len(keysyms) // max(per_keycode, 1)):
            row = first_keycode - self.first + offset
            if 0 <= row < len(codes):
                codes[row] = list(keysyms[offset * per_keycode : (offset + 1) * per_keycode])
        self.codes = codes

    def _keysym(self, keycode: int, index: int) -> int:
        row = keycode - self.first
        if 0 <= row < len(self.codes) and index < len(self.codes[row]):
            return int(self.codes[row][index])
        return X.NoSymbol

    def modifiers(self, state: int) -> list[str]:
        held = []
        if state & X.ControlMask:
            held.append("ctrl")
        if state & X.ShiftMask:
            held.append("shift")
        held.extend(name for mask, name in self.mod_names.items() if state & mask)
        return held

    def lookup(self, keycode: int, state: int) -> tuple[str, str | None, bool]:
        """``(name, char, known)`` for a press of ``keycode`` with modifier ``state``.

        ``name`` is the unshifted key's name when Ctrl/Alt/Super is held (hotkeys are
        named by their key: ctrl+shift+s) and the shifted keysym's name otherwise.
        """
        base = self._keysym(keycode, 0)
        if base == X.NoSymbol:
            return ("", None, False)
        shifted = bool(state & X.ShiftMask)
        if 0xFF80 <= base <= 0xFFBD and self.num_lock and state & self.num_lock:
            shifted = not shifted  # Num Lock swaps the keypad's levels (KP_End <-> KP_1)
        keysym = self._keysym(keycode, 1) if shifted else base
        if keysym == X.NoSymbol:
            keysym = base
        char = keysym_char(keysym)
        if char is not None and char.isalpha():
            # Caps Lock flips letters; a keymap without a shifted level still has upper case.
            upper = shifted != bool(state & X.LockMask)
            char = char.upper() if upper else char.lower()
        hotkey = any(name in ("ctrl", "alt", "super") for name in self.modifiers(state))
        name = keysym_name(base if hotkey else keysym)
        return (name, char, True)
