"""A desktop session (``--env desktop``, a real server on loopback) whose model size has
another shape than its screen: a 1280x800 screen at ``target: "XGA"`` (0.8 across,
0.96 down). Every box its snapshot lists, its centre sent as a model's click point,
lands on the button it names: the GTK column app logs each click, and nothing else."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from websockets.sync.client import connect

from viewfinder.core.testing import wait_until
from viewfinder.server import LocalServer

from .test_desktop_elements import said, text_of
from .test_desktop_env import ask, call, ws_url

ROOT = Path(__file__).resolve().parents[3]
COLUMN = ROOT / "packages" / "desktop" / "tests" / "gtk_button_column.py"
SYSTEM_PYTHON = "/usr/bin/python3"  # GTK's bindings are Debian's python3-gi
NAMES = ("Open", "Draft", "Reply", "Forward", "Archive", "Label", "Send", "Delete")
BUTTON = re.compile(r'^\s*e\d+ push button "(\w+)"(?: \[\w+\])* @(\d+),(\d+) (\d+)x(\d+)$')


def buttons(text: str) -> dict[str, tuple[int, ...]]:
    found = {}
    for line in text.splitlines():
        match = BUTTON.match(line)
        if match:
            found[match.group(1)] = tuple(int(value) for value in match.groups()[1:])
    return found


def test_listed_boxes_at_xga_on_a_1280x800_screen_are_clicked_where_they_are(
    serve: Callable[..., LocalServer], tmp_path: Path
) -> None:
    server = serve(env="desktop", allow_any_app=True)
    log = tmp_path / "column.log"
    app = [SYSTEM_PYTHON, str(COLUMN), "--log", str(log)]
    task = {"apps": [app], "elements": True, "size": [1280, 800], "target": "XGA"}
    with connect(ws_url(server), max_size=None) as ws:
        reset = ask(ws, {"type": "reset", "data": task})
        assert reset["data"]["observation"]["metadata"]["model_size"] == [1024, 768]
        wait_until(lambda: "ready" in said(log), "the column to be drawn")
        listed = wait_until(
            lambda: (
                found
                if len(found := buttons(text_of(call(ws, "computer", action="screenshot")))) == 8
                else None
            ),
            "the snapshot to list the eight buttons",
        )
        for count, name in enumerate(NAMES, start=1):
            x, y, width, height = listed[name]
            point = [x + width // 2, y + height // 2]
            clicked = call(ws, "computer", action="left_click", coordinate=point)
            assert clicked["error"] is None, clicked
            wait_until(lambda name=name: f"clicked {name}" in said(log), f"{name} to be clicked")
            assert [line for line in said(log) if line != "ready"] == [
                f"clicked {n}" for n in NAMES[:count]
            ], (name, listed[name])
