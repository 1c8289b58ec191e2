"""reset() hands the next episode a display as a fresh one has it.

The old worker's windows go with its processes; what it set on the X server does not
go by itself: the root window's background and properties, the keyboard mapping, the
pointer. A step changes all of them with the usual tools; after reset they are back.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable

from PIL import Image
from Xlib import XK

from viewfinder.codeenv import CodeAction, CodeEnvironment
from viewfinder.xvfb.connection import close_quietly, open_display

DIRTY = """
import subprocess
for command in (
    ["xsetroot", "-solid", "#ff0000"],
    ["xmodmap", "-e", "keycode 38 = z"],
    ["xprop", "-root", "-f", "_EPISODE_MARK", "8s", "-set", "_EPISODE_MARK", "old"],
    ["xdotool", "mousemove", "7", "9"],
):
    subprocess.run(command, check=True)
capture_screenshot(region=(300, 200, 40, 40))
"""


def server_state(name: str) -> tuple[int, bool, tuple[int, int]]:
    conn = open_display(name)
    try:
        root = conn.screen().root
        keysym = conn.keycode_to_keysym(38, 0)
        mark = conn.intern_atom("_EPISODE_MARK")
        pointer = root.query_pointer()
        return keysym, mark in root.list_properties(), (pointer.root_x, pointer.root_y)
    finally:
        close_quietly(conn)


def colours(shot: str) -> set[tuple[int, int, int]]:
    image = Image.open(io.BytesIO(base64.b64decode(shot))).convert("RGB")
    return {rgb for _, rgb in image.getcolors(1 << 16) or []}


def test_reset_restores_the_root_window_keymap_properties_and_pointer(
    make_env: Callable[..., CodeEnvironment],
) -> None:
    env = make_env(timeout_s=60)
    assert env.display is not None
    name = env.display.name
    fresh = env.step(CodeAction(code="capture_screenshot(region=(300, 200, 40, 40))"))
    fresh_state = server_state(name)
    assert fresh_state[0] == XK.string_to_keysym("a") and not fresh_state[1]

    dirty = env.step(CodeAction(code=DIRTY))
    assert dirty.exit_code == 0, dirty.stderr
    assert colours(dirty.screenshots[0]) == {(255, 0, 0)}
    assert server_state(name) == (XK.string_to_keysym("z"), True, (7, 9))

    env.reset()
    assert env.display is not None and env.display.name == name  # the same display
    after = env.step(CodeAction(code="capture_screenshot(region=(300, 200, 40, 40))"))
    assert after.screenshots == fresh.screenshots  # the same pixels as when it was fresh
    assert server_state(name) == fresh_state
