"""The task both desktop agent examples give their agent: fill in the form of desktop_form.py.

Shared by ``desktop_agent_anthropic.py`` and ``desktop_agent_openai.py``: the task's
words for a model, where the form's widgets are for the scripted policy, the desktop
the task runs on, and the check that reads the form's own state to say whether the
task was done.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from viewfinder.desktop import ComputerResult, Desktop

HERE = Path(__file__).resolve().parent
#: The screen the task runs on; the model sees it scaled to XGA (1024x768).
SCREEN = (1280, 800)
TARGET = "XGA"
NAME = "Ada Lovelace"
TASK = (
    f"A form is open on the screen. Type {NAME!r} into the Name field, click the Apply "
    "button, drag the slider below it to about the middle, and select 'Item 03' in the "
    "list. Say 'done' when the form is filled."
)
#: Where the scripted policy acts, in SCREEN pixels (the form's window sits at 0,0; see
#: desktop_form.py). A model finds these on the screenshots instead.
NAME_FIELD = (230, 35)
APPLY = (70, 88)
SLIDER_KNOB = (35, 155)  # the knob at 0
SLIDER_MIDDLE = (200, 155)
ITEM_03 = (80, 274)


@contextlib.contextmanager
def form_desktop(state: Path | None = None) -> Iterator[tuple[Desktop, Path]]:
    """A desktop showing the form; yields it and the file the form writes its state to."""
    with contextlib.ExitStack() as stack:
        if state is None:
            state = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "form.json"
        command = [sys.executable, str(HERE / "desktop_form.py"), "--state", str(state)]
        desktop = stack.enter_context(Desktop(size=SCREEN, apps=[command]))
        yield desktop, state


def form_state(state: Path) -> dict[str, Any]:
    """What the form shows now, as it wrote it."""
    try:
        return json.loads(state.read_text())
    except (OSError, ValueError):
        return {}


def unfilled(state: Path) -> list[str]:
    """What is still missing from the form (empty when the task is done)."""
    now = form_state(state)
    missing = []
    if now.get("entry", {}).get("text") != NAME:
        missing.append(f"the name is {now.get('entry', {}).get('text')!r}, not {NAME!r}")
    if not now.get("swatch", {}).get("clicks"):
        missing.append("Apply was not clicked")
    if not 30 <= now.get("slider", 0) <= 70:
        missing.append(f"the slider is at {now.get('slider')}, not near the middle")
    if now.get("list", {}).get("selected") != ["Item 03"]:
        missing.append(f"the list's selection is {now.get('list', {}).get('selected')}")
    return missing


class Frames:
    """Saves the screenshot of every step into a folder (when given one)."""

    def __init__(self, out: Path | None) -> None:
        self.out = out
        self.count = 0
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)

    def save(self, result: ComputerResult) -> None:
        self.count += 1
        if self.out is not None and result.screenshot is not None:
            name = result.action or "error"
            result.screenshot.save(self.out / f"{self.count:02d}-{name}.png")


def report(state: Path, frames: Frames) -> int:
    """Print whether the form was filled; the exit status of the example."""
    missing = unfilled(state)
    where = f", frames in {frames.out}" if frames.out is not None else ""
    if missing:
        print(f"the form is NOT filled: {'; '.join(missing)}{where}")
        return 1
    now = form_state(state)
    print(
        f"the form is filled: name {now['entry']['text']!r}, Apply clicked, slider at "
        f"{now['slider']}, {now['list']['selected'][0]} selected ({frames.count} steps{where})"
    )
    return 0
