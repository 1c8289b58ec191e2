"""What a session can change on a display besides its windows, and putting it back.

Closing a session's X clients takes its windows away, but the server keeps what those
clients set on it: the root window's background (``xsetroot -solid red``), properties
on the root window (``xrdb``'s resources, a wallpaper id), the keyboard and modifier
mappings (``xmodmap``), the pointer's position and keys or buttons left pressed.
:func:`snapshot` records them on a fresh display; :func:`restore` puts them back, so the
next episode or session starts on a display as a fresh one has it.
"""

from __future__ import annotations

from dataclasses import dataclass

import Xlib.display
from Xlib import X
from Xlib.ext import xtest

from viewfinder.xvfb.connection import close_quietly, open_display


@dataclass(frozen=True)
class DisplayState:
    """A display's server-side state that outlives the clients that changed it."""

    root_properties: frozenset[int]
    first_keycode: int
    keysyms: tuple[tuple[int, ...], ...]
    modifiers: tuple[tuple[int, ...], ...]
    pointer: tuple[int, int]


def snapshot(name: str) -> DisplayState:
    """Record the state of display ``name`` (call it while nothing else uses it)."""
    conn = open_display(name)
    try:
        return _snapshot(conn)
    finally:
        close_quietly(conn)


def restore(name: str, state: DisplayState) -> None:
    """Put display ``name`` back to ``state``; its windows are the caller's business."""
    conn = open_display(name)
    try:
        _restore(conn, state)
    finally:
        close_quietly(conn)


def _snapshot(conn: Xlib.display.Display) -> DisplayState:
    root = conn.screen().root
    first = conn.display.info.min_keycode
    count = conn.display.info.max_keycode - first + 1
    pointer = root.query_pointer()
    return DisplayState(
        root_properties=frozenset(root.list_properties()),
        first_keycode=first,
        keysyms=tuple(tuple(row) for row in conn.get_keyboard_mapping(first, count)),
        modifiers=tuple(tuple(keys) for keys in conn.get_modifier_mapping()),
        pointer=(pointer.root_x, pointer.root_y),
    )


def _restore(conn: Xlib.display.Display, state: DisplayState) -> None:
    root = conn.screen().root
    _release_input(conn)
    # A root window's background set to None is the server's default background again.
    root.change_attributes(background_pixmap=X.NONE)
    root.clear_area()
    for atom in set(root.list_properties()) - state.root_properties:
        root.delete_property(atom)
    current = _snapshot(conn)
    if current.keysyms != state.keysyms:
        conn.change_keyboard_mapping(state.first_keycode, [list(row) for row in state.keysyms])
    if current.modifiers != state.modifiers:
        conn.set_modifier_mapping([list(keys) for keys in state.modifiers])
    root.warp_pointer(*state.pointer)
    conn.sync()


def _release_input(conn: Xlib.display.Display) -> None:
    """Let go of any key or button the previous user left pressed (through XTest)."""
    pointer = conn.screen().root.query_pointer()
    for button, mask in ((1, X.Button1Mask), (2, X.Button2Mask), (3, X.Button3Mask)):
        if pointer.mask & mask:
            xtest.fake_input(conn, X.ButtonRelease, button)
    keymap = conn.query_keymap()
    for byte_index, byte in enumerate(keymap):
        for bit in range(8):
            if byte & (1 << bit):
                xtest.fake_input(conn, X.KeyRelease, byte_index * 8 + bit)
    conn.sync()
