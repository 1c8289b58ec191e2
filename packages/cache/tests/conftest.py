"""Fixtures for the cache tests: drawn form screens and model message histories."""

from __future__ import annotations

import base64
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from viewfinder.core import Event, EventKind, Point, Region, imaging

#: Where things are on the drawn form (640x480).
ENTRY = Region(x=40, y=40, width=260, height=30)
SUBMIT = Region(x=40, y=140, width=120, height=40)
CANCEL = Region(x=200, y=140, width=120, height=40)


def draw_form(
    submit: Region = SUBMIT, submit_colour: tuple[int, int, int] = (30, 90, 200), text: str = ""
) -> Image.Image:
    """A 640x480 form: an entry, a Submit button (movable, recolourable), a Cancel button."""
    image = Image.new("RGB", (640, 480), (236, 236, 236))
    draw = ImageDraw.Draw(image)
    draw.rectangle(
        (ENTRY.x, ENTRY.y, ENTRY.right - 1, ENTRY.bottom - 1), (255, 255, 255), (90, 90, 90)
    )
    draw.text((ENTRY.x + 6, ENTRY.y + 9), text, fill=(0, 0, 0))
    draw.rectangle((submit.x, submit.y, submit.right - 1, submit.bottom - 1), submit_colour)
    draw.text((submit.x + 36, submit.y + 14), "Submit", fill=(255, 255, 255))
    draw.rectangle((CANCEL.x, CANCEL.y, CANCEL.right - 1, CANCEL.bottom - 1), (200, 40, 40))
    draw.text((CANCEL.x + 36, CANCEL.y + 14), "Cancel", fill=(255, 255, 255))
    return image


def image_block(image: Image.Image) -> dict[str, Any]:
    data = base64.b64encode(imaging.encode(image, "png")).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def make_history(
    first_frame: Image.Image | None,
    steps: Sequence[tuple[dict[str, Any], Image.Image | None]],
    usage: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """A messages history: the task with ``first_frame``, then per step a tool_use and a
    tool_result carrying the frame after it (None: a text-only result)."""
    opening: list[dict[str, Any]] = [{"type": "text", "text": "Fill in the form."}]
    if first_frame is not None:
        opening.append(image_block(first_frame))
    messages: list[dict[str, Any]] = [{"role": "user", "content": opening}]
    for number, (tool_input, after) in enumerate(steps):
        call_id = f"toolu_{number:02d}"
        assistant: dict[str, Any] = {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Next."},
                {"type": "tool_use", "id": call_id, "name": "computer", "input": tool_input},
            ],
        }
        if usage:
            assistant["usage"] = usage
        messages.append(assistant)
        result: list[dict[str, Any]] = [{"type": "text", "text": "done"}]
        if after is not None:
            result.append(image_block(after))
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
            }
        )
    return messages


@pytest.fixture
def form() -> Callable[..., Image.Image]:
    """``form(submit=Region, submit_colour=(r, g, b), text="")`` draws the form screen."""
    return draw_form


@pytest.fixture
def history() -> Callable[..., list[dict[str, Any]]]:
    """``history(first_frame, [(tool_input, frame_after), ...])`` builds a messages list."""
    return make_history


@pytest.fixture
def layout() -> dict[str, Region]:
    return {"entry": ENTRY, "submit": SUBMIT, "cancel": CANCEL}


class LoggedForm:
    """A test form app (``python FORM LAYOUT``) on ``display``, started once it printed
    "ready"; :meth:`close` returns the clicks it printed ("clicked NAME") up to the
    click on ``sentinel``, which it reports as "clicked canvas"."""

    def __init__(self, python: str, form: Path, display: Any, layout: str, sentinel: Point) -> None:
        self.display = display
        self.sentinel = sentinel
        self.process = subprocess.Popen(
            [python, str(form), layout],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # once the window is drawn
        assert line.strip() == "ready", f"the form did not start: {line!r}"

    def close(self) -> list[str]:
        # X events are handled in order: once the app printed the sentinel click, every
        # click sent before it has been printed too
        assert self.process.stdout is not None
        clicks = []
        watchdog = threading.Timer(20, self.process.kill)  # the reading below is bounded
        watchdog.start()
        try:
            with self.display.backend() as screen:
                screen.act(Event(kind=EventKind.CLICK, position=self.sentinel))
            for line in self.process.stdout:
                if line.strip() == "clicked canvas":
                    break
                clicks.append(line.strip())
        finally:
            watchdog.cancel()
            self.process.terminate()
            self.process.communicate(timeout=10)
        return clicks
