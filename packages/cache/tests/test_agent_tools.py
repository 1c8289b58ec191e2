"""``cache_check`` and ``cache_replay`` as registered tools, on a real Tk app on Xvfb."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from viewfinder.cache import build_from_trajectory, save_cache_file
from viewfinder.core import (
    Event,
    EventKind,
    Point,
    ToolContext,
    Trajectory,
    call_tool,
    tool_registry,
)
from viewfinder.xvfb import Display

#: A window with a dark button at (x, y) given on the command line; it prints "clicked"
#: when the button is clicked.
APP = r"""
import sys, tkinter as tk
x, y = int(sys.argv[1]), int(sys.argv[2])
root = tk.Tk()
root.geometry("320x240+0+0")
root.configure(bg="#f0f0f0")
button = tk.Label(root, text="Go", bg="#202060", fg="white")
button.place(x=x, y=y, width=80, height=40)
button.bind("<Button-1>", lambda e: print("clicked", flush=True))
root.after(100, lambda: print("ready", flush=True))
root.mainloop()
"""
BUTTON = (40, 40)
CLICK = Point(x=80, y=60)


class App:
    def __init__(self, display: Display, at: tuple[int, int]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", APP, str(at[0]), str(at[1])],
            env=display.env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"

    def said(self) -> str:
        """The app's next line: waits for a click still on its way to the app
        (pytest's timeout bounds the wait)."""
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def close(self) -> list[str]:
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        return out.split()


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(320, 240) as display:
        yield display


@pytest.fixture(scope="module")
def cache_file(display: Display, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-click trajectory on the app as first drawn, hashed around the click."""
    app = App(display, BUTTON)
    try:
        frame = display.backend().capture()
    finally:
        app.close()
    trajectory = Trajectory()
    trajectory.metadata.visual_validation.enabled = True
    trajectory.append(Event(kind=EventKind.CLICK, position=CLICK), frame=frame)
    path = tmp_path_factory.mktemp("cache") / "go.json"
    save_cache_file(build_from_trajectory(trajectory, goal="press Go"), path)
    return path


def test_both_tools_are_registered() -> None:
    tools = tool_registry()
    assert tools["cache_check"].plugin == tools["cache_replay"].plugin == "cache"
    assert tools["cache_check"].annotations == {"readOnlyHint": True}


def test_check_matches_the_same_screen_and_finds_the_changed_step(
    display: Display, cache_file: Path
) -> None:
    context = ToolContext(display=display.name, workdir=cache_file.parent)
    app = App(display, BUTTON)
    try:
        same = call_tool("cache_check", {"file": "go.json"}, context)
    finally:
        app.close()
    assert not same.is_error, same.text
    assert same.structured is not None and same.structured["status"] == "MATCH"

    moved = App(display, (220, 160))
    try:
        changed = call_tool("cache_check", {"file": "go.json"}, context)
    finally:
        moved.close()
    assert changed.structured is not None
    assert changed.structured["status"] == "MISMATCH"
    assert changed.structured["step"] == 0
    assert changed.structured["distance"] > changed.structured["steps"][0]["threshold"]
    assert "differs from the recording at step 0" in changed.text


def test_replay_clicks_on_the_same_app_heals_a_moved_button_or_stops_without_healing(
    display: Display, cache_file: Path
) -> None:
    context = ToolContext(display=display.name, workdir=cache_file.parent)
    app = App(display, BUTTON)
    said = []
    try:
        done = call_tool("cache_replay", {"file": "go.json", "delay_between_actions": 0}, context)
        assert done.structured is not None and done.structured["status"] == "COMPLETED", done.text
        said = [app.said()]  # replay returned once the app had handled the click
    finally:
        said += app.close()
    assert done.structured is not None and done.structured["status"] == "COMPLETED", done.text
    assert said == ["clicked"]
    assert done.structured["warnings"] == []
    (after,) = done.images
    assert after.size == (320, 240)

    moved = App(display, (220, 160))
    said = []
    try:
        healed = call_tool("cache_replay", {"file": "go.json"}, context)
        assert healed.structured is not None and healed.structured["status"] == "COMPLETED"
        assert [step["method"] for step in healed.structured["healed"]] == ["template"]
        said = [moved.said()]
    finally:
        said += moved.close()
    assert said == ["clicked"]  # the moved button, found by its picture

    moved = App(display, (220, 160))
    try:
        stopped = call_tool("cache_replay", {"file": "go.json", "heal": False}, context)
    finally:
        said = moved.close()
    assert stopped.structured is not None
    assert stopped.structured["status"] == "NEEDS_AGENT"
    assert stopped.structured["step"] == 0
    assert said == []  # nothing was clicked


def test_bad_input_is_an_error_result(display: Display, cache_file: Path) -> None:
    context = ToolContext(display=display.name, workdir=cache_file.parent)
    outside = call_tool("cache_check", {"file": "../../etc/passwd"}, context)
    assert outside.is_error and "outside this session's folder" in outside.text
    missing = call_tool("cache_replay", {"file": "nope.json"}, context)
    assert missing.is_error and "nope.json" in missing.text
    (cache_file.parent / "broken.json").write_text("{not json")
    broken = call_tool("cache_check", {"file": "broken.json"}, context)
    assert broken.is_error and "broken.json" in broken.text
    no_display = call_tool(
        "cache_check", {"file": "go.json"}, ToolContext(workdir=cache_file.parent)
    )
    assert no_display.is_error and "no display" in no_display.text
