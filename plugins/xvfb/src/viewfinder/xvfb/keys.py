"""Key names and characters to X keysyms.

Key chords name keys the way xdotool does: X keysym names (``Return``, ``Page_Down``,
``F5``, ``a``, ``A``, ``slash``), in any case, plus the aliases people and agents type
(``ctrl``, ``alt``, ``cmd``, ``enter``, ``esc``, ``pgdn``...). Text is typed character
by character: printable Latin-1 characters are their own keysyms, everything else uses
X's Unicode keysyms (``0x01000000 + code point``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from Xlib import XK

from viewfinder.core.errors import ActionError

# python-xlib loads only the latin1 and miscellany names by default.
for _group in ("latin2", "latin3", "latin4", "greek", "cyrillic", "xkb", "publishing", "xf86"):
    XK.load_keysym_group(_group)

#: Aliases (lower case) to X keysym names.
ALIASES: dict[str, str] = {
    "ctrl": "Control_L",
    "control": "Control_L",
    "lctrl": "Control_L",
    "ctl": "Control_L",
    "rctrl": "Control_R",
    "alt": "Alt_L",
    "option": "Alt_L",
    "opt": "Alt_L",
    "altgr": "ISO_Level3_Shift",
    "altgraph": "ISO_Level3_Shift",
    "shift": "Shift_L",
    "lshift": "Shift_L",
    "rshift": "Shift_R",
    # The computer-use tool and macOS users say cmd/meta for the "logo" key.
    "super": "Super_L",
    "cmd": "Super_L",
    "command": "Super_L",
    "meta": "Super_L",
    "win": "Super_L",
    "windows": "Super_L",
    "enter": "Return",
    "return": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "del": "Delete",
    "delete": "Delete",
    "ins": "Insert",
    "bksp": "BackSpace",
    "backspace": "BackSpace",
    "pgup": "Prior",
    "pageup": "Prior",
    "pgdn": "Next",
    "pagedown": "Next",
    "capslock": "Caps_Lock",
    "numlock": "Num_Lock",
    "scrolllock": "Scroll_Lock",
    "contextmenu": "Menu",
    "printscreen": "Print",
    "prtsc": "Print",
    "space": "space",
    "spacebar": "space",
    "arrowup": "Up",
    "arrowdown": "Down",
    "arrowleft": "Left",
    "arrowright": "Right",
}

#: The characters that type as a key rather than as their code point.
_CHAR_KEYS = {"\n": "Return", "\r": "Return", "\t": "Tab", "\b": "BackSpace", "\x1b": "Escape"}

KEY_NAMING_HELP = (
    "name keys as X keysyms as xdotool does (Return, Escape, Tab, BackSpace, Delete, Up, "
    "Page_Down, Home, F1..F12, KP_Enter, XF86AudioMute, a, A, 1, slash, comma) or with an "
    "alias (ctrl, alt, shift, super/cmd/meta, enter, esc, pgup, pgdn, up, left, space, "
    "numlock); join a chord with '+', as in ctrl+shift+t or ctrl++"
)


@functools.cache
def _lowercase_names() -> dict[str, int]:
    names: dict[str, int] = {}
    for attribute in dir(XK):
        if attribute.startswith("XK_"):
            # Keep the first spelling for names that differ only in case (eacute/Eacute):
            # case matters there and exact matches are tried before this table.
            name = attribute[3:].lower()
            names.setdefault(name, getattr(XK, attribute))
            if name.startswith("xf86_"):  # python-xlib's XF86_AudioMute is X's XF86AudioMute
                names.setdefault("xf86" + name[5:], getattr(XK, attribute))
    return names


def split_chord(text: str) -> list[str]:
    """The key names of a chord written with ``+``: ``"ctrl+shift+t"``, ``"ctrl++"``
    (Control and the plus key), ``"+"``; :class:`ActionError` for a chord ending in a
    lone ``+`` (``"ctrl+"``)."""
    names: list[str] = []
    parts = text.split("+")
    index = 0
    while index < len(parts):
        part = parts[index]
        if part:
            names.append(part)
        elif index + 1 < len(parts) and not parts[index + 1]:
            names.append("+")  # "++": an empty name before a "+" and after it
            index += 1
        elif len(parts) > 1:
            raise ActionError(
                f"unknown key {text!r}: a chord cannot end or start with a lone '+'; "
                f"write the plus key as 'plus' or as the last '+' of 'ctrl++'; {KEY_NAMING_HELP}"
            )
        index += 1
    if not names:
        raise ActionError(f"empty key name; {KEY_NAMING_HELP}")
    return names


def keysym_for_char(char: str) -> int:
    """The keysym that types ``char`` (one character)."""
    if len(char) != 1:
        raise ValueError(f"expected one character, got {char!r}")
    if char in _CHAR_KEYS:
        return XK.string_to_keysym(_CHAR_KEYS[char])
    code = ord(char)
    if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF:
        return code  # Latin-1 keysyms equal their code points
    if code < 0x20 or code == 0x7F:
        raise ActionError(
            f"cannot type control character {char!r}; send it as a key chord instead (e.g. ctrl+c)"
        )
    return 0x01000000 | code


def keysym_for_name(name: str) -> int:
    """The keysym a key name means; :class:`ActionError` saying how to name keys otherwise."""
    cleaned = name.strip()
    if not cleaned:
        if name:  # " " itself is the space key
            return XK.string_to_keysym("space")
        raise ActionError(f"empty key name; {KEY_NAMING_HELP}")
    exact = XK.string_to_keysym(cleaned)
    if exact:
        return int(exact)
    lowered = cleaned.lower().replace("-", "_")
    alias = ALIASES.get(lowered.replace("_", ""))
    if alias is not None:
        return int(XK.string_to_keysym(alias))
    known = _lowercase_names().get(lowered)
    if known is not None:
        return known
    if len(cleaned) == 1:
        return keysym_for_char(cleaned)
    raise ActionError(f"unknown key {name!r}; {KEY_NAMING_HELP}")


def keysym_name(keysym: int) -> str:
    """A readable name for ``keysym`` (for error messages)."""
    return XK.keysym_to_string(keysym) or f"0x{keysym:x}"


def chord_keysyms(keys: str | Sequence[str]) -> list[int]:
    """The keysyms of a chord, written ``"ctrl+s"`` or given as names ``["ctrl", "s"]``."""
    names = split_chord(keys) if isinstance(keys, str) else list(keys)
    return [keysym_for_name(name) for name in names]
