"""Cache replay end to end: a real Tk form on a real Xvfb, recorded and replayed.

A scripted agent fills in the form through the xvfb backend and keeps an Anthropic
message history (tool_use blocks, tool_result screenshots); the cache is built from
that history. Replays then run against fresh copies of the form: unchanged, with the
"Bold" button moved, and with it recoloured. The form reports every click and the
submitted text on stdout, so the tests see exactly which steps acted.
"""

from __future__ import annotations

import base64
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from viewfinder.cache import (
    CacheExecutor,
    CacheFile,
    ExecutionSettings,
    ReplayStatus,
    build_from_messages,
    check_steps,
    parameterize,
)
from viewfinder.core import Event, EventKind, Point
from viewfinder.xvfb import Display, XvfbBackend

DEADLINE_S = 30.0
# Perceptual hashes see the brightness pattern, not hue: a button recoloured from blue to
# red (still darker than the background) hashes the same; one turned white does not.
BLUE, RED, WHITE = "#1e5ac8", "#c83232", "#ffffff"
BOLD_AT, BOLD_MOVED = (40, 140), (420, 330)
ENTRY, SUBMIT, SENTINEL, PARK = (170, 55), (260, 160), (615, 455), (630, 300)

FORM_APP = r"""
import json, sys, tkinter as tk

bold_x, bold_y, bold_colour = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
root = tk.Tk()
root.geometry("640x480+0+0")
root.configure(bg="#ececec")
def emit(**fields):
    print(json.dumps(fields), flush=True)
# no blinking caret, no focus ring, labels as buttons: nothing changes unless acted on
entry = tk.Entry(root, insertofftime=0, highlightthickness=0, relief="flat", bg="white",
                 font=("DejaVu Sans", 14))
entry.place(x=40, y=40, width=260, height=30)
bold = tk.Label(root, text="Bold", bg=bold_colour, fg="white", font=("DejaVu Sans", 12))
bold.place(x=bold_x, y=bold_y, width=120, height=40)
submit = tk.Label(root, text="Submit", bg="#2e8b57", fg="white", font=("DejaVu Sans", 12))
submit.place(x=200, y=140, width=120, height=40)
status = tk.Label(root, text="", bg="#ececec", font=("DejaVu Sans", 12))
status.place(x=40, y=380, width=400, height=30)
sentinel = tk.Frame(root, bg="#333333")
sentinel.place(x=600, y=440, width=30, height=30)
entry.bind("<Button-1>", lambda e: emit(type="click", target="entry"), add="+")
entry.bind("<KeyRelease>", lambda e: emit(type="text", text=entry.get()), add="+")
bold.bind("<Button-1>", lambda e: emit(type="click", target="bold"))
def on_submit(_event):
    status.configure(text="Sent: " + entry.get())
    emit(type="click", target="submit", text=entry.get())
submit.bind("<Button-1>", on_submit)
sentinel.bind("<Button-1>", lambda e: emit(type="click", target="sentinel"))
root.after(200, lambda: emit(type="ready"))
root.mainloop()
"""


class FormApp:
    """The form running on a display; collects what it reports."""

    def __init__(self, display: Display, script: Path, bold: tuple[int, int], colour: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(script), str(bold[0]), str(bold[1]), colour],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for(lambda event: event["type"] == "ready", "the form to start")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(json.loads(line))

    def wait_for(self, match: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        for event in self.events:
            if match(event):
                return event
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline:
            try:
                event = self._lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            self.events.append(event)
            if match(event):
                return event
        pytest.fail(f"no event for {what} within {DEADLINE_S:g}s; saw {self.events}")

    def clicks(self) -> list[str]:
        return [event["target"] for event in self.events if event["type"] == "click"]

    def settle(self, backend: XvfbBackend) -> list[str]:
        """Everything the form got so far: click the sentinel and wait for it to report."""
        backend.act(Event(kind=EventKind.CLICK, position=Point(x=SENTINEL[0], y=SENTINEL[1])))
        self.wait_for(lambda event: event.get("target") == "sentinel", "the sentinel click")
        return [target for target in self.clicks() if target != "sentinel"]

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(640, 480) as started:
        yield started


@pytest.fixture(scope="module")
def backend(display: Display) -> Iterator[XvfbBackend]:
    made = display.backend()
    try:
        yield made
    finally:
        made.close()


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("form") / "form_app.py"
    path.write_text(FORM_APP)
    return path


def wait_for_pixel(backend: XvfbBackend, xy: tuple[int, int], colour: str) -> None:
    """Wait until the screen shows ``colour`` at ``xy`` (the form has been drawn)."""
    want = tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    deadline = time.monotonic() + DEADLINE_S
    while backend.grab().getpixel(xy) != want:
        if time.monotonic() > deadline:
            pytest.fail(f"the form was not drawn: {xy} is not {colour}")
        time.sleep(0.05)


def show(backend: XvfbBackend, bold: tuple[int, int], colour: str) -> None:
    """Park the pointer, then wait until the form is drawn.

    The pointer is drawn into the framebuffer: every run starts with it in one place,
    away from the pixels waited for and the regions hashed before it moves.
    """
    backend.act(Event(kind=EventKind.MOVE, position=Point(x=PARK[0], y=PARK[1])))
    wait_for_pixel(backend, (bold[0] + 4, bold[1] + 4), colour)
    wait_for_pixel(backend, (SENTINEL[0], SENTINEL[1]), "#333333")


@pytest.fixture
def start_form(
    display: Display, backend: XvfbBackend, script: Path
) -> Iterator[Callable[..., FormApp]]:
    """``start_form(bold=(x, y), colour=BLUE)``: a fresh form, drawn, pointer parked."""
    started: list[FormApp] = []

    def start(bold: tuple[int, int] = BOLD_AT, colour: str = BLUE) -> FormApp:
        while started:
            started.pop().close()
        app = FormApp(display, script, bold, colour)
        started.append(app)
        show(backend, bold, colour)
        return app

    yield start
    for app in started:
        app.close()


def record_by_agent(backend: XvfbBackend, app: FormApp) -> list[dict[str, Any]]:
    """Fill in the form as an agent would, keeping the message history it would keep."""

    def screenshot() -> dict[str, Any]:
        data = base64.b64encode(backend.capture().data).decode("ascii")
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": data},
        }

    steps: list[tuple[dict[str, Any], Callable[[dict[str, Any]], bool]]] = [
        ({"action": "left_click", "coordinate": list(ENTRY)}, lambda e: e.get("target") == "entry"),
        ({"action": "left_click", "coordinate": [100, 160]}, lambda e: e.get("target") == "bold"),
        (
            {"action": "type", "text": "Ada"},
            lambda e: e.get("text") == "Ada" and e["type"] == "text",
        ),
        (
            {"action": "left_click", "coordinate": list(SUBMIT)},
            lambda e: e.get("target") == "submit",
        ),
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Submit Ada in bold."}, screenshot()]}
    ]
    for number, (tool_input, reported) in enumerate(steps):
        call_id = f"toolu_{number:02d}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": call_id, "name": "computer", "input": tool_input}
                ],
            }
        )
        backend.act(Event.from_computer_use(tool_input))
        app.wait_for(reported, f"step {number}")
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call_id, "content": [screenshot()]}
                ],
            }
        )
    return messages


@pytest.fixture(scope="module")
def recorded(display: Display, backend: XvfbBackend, script: Path) -> CacheFile:
    app = FormApp(display, script, BOLD_AT, BLUE)
    try:
        show(backend, BOLD_AT, BLUE)
        messages = record_by_agent(backend, app)
    finally:
        app.close()
    cache = build_from_messages(messages, goal="Submit Ada in bold")
    return parameterize(cache, {"name": "Ada"})


SETTINGS = ExecutionSettings(delay_time_between_actions=0.3)


def replay(backend: XvfbBackend, cache: CacheFile, name: str = "Ada", **settings: Any) -> Any:
    chosen = SETTINGS.model_copy(update=settings)
    return CacheExecutor(backend, chosen).run(cache.model_copy(deep=True), {"name": name})


def test_every_click_and_text_entry_was_hashed(recorded: CacheFile) -> None:
    assert [block.action for block in recorded.trajectory] == [
        "left_click",
        "left_click",
        "type",
        "left_click",
    ]
    assert all(block.visual_representation for block in recorded.trajectory)
    assert recorded.trajectory[2].input == {"action": "type", "text": "{{name}}"}


def test_unchanged_form_replays_completely(
    backend: XvfbBackend, start_form: Callable[..., FormApp], recorded: CacheFile
) -> None:
    app = start_form()
    result = replay(backend, recorded)
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert result.acted == [0, 1, 2, 3]
    assert all(step.validated for step in result.steps)
    assert all(step.distance is not None and step.distance <= 4 for step in result.steps), (
        result.steps
    )
    submitted = app.wait_for(lambda event: event.get("target") == "submit", "the submit click")
    assert submitted["text"] == "Ada"
    assert app.settle(backend) == ["entry", "bold", "submit"]


@pytest.mark.parametrize(
    ("bold", "colour"), [(BOLD_MOVED, BLUE), (BOLD_AT, WHITE)], ids=["moved", "recoloured"]
)
def test_a_changed_button_stops_replay_at_exactly_its_step(
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    recorded: CacheFile,
    bold: tuple[int, int],
    colour: str,
) -> None:
    app = start_form(bold=bold, colour=colour)
    result = replay(backend, recorded)
    assert result.status is ReplayStatus.NEEDS_AGENT, result.message
    assert result.step_index == 1 and result.acted == [0]
    assert result.distance is not None and result.distance > result.threshold == 10
    # nothing after the entry click reached the form: no bold, no text, no submit
    assert app.settle(backend) == ["entry"]
    assert not [event for event in app.events if event["type"] == "text"]


def test_threshold_sweep_shows_the_sensitivity(
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    recorded: CacheFile,
) -> None:
    # The Bold button's step (1), checked without acting, on four versions of the form.
    distances, passed = {}, {}
    for label, bold, colour in [
        ("unchanged", BOLD_AT, BLUE),
        ("red, as dark as the blue", BOLD_AT, RED),
        ("moved", BOLD_MOVED, BLUE),
        ("white", BOLD_AT, WHITE),
    ]:
        start_form(bold=bold, colour=colour)
        checks = check_steps(backend, recorded)
        assert [check.index for check in checks] == [0, 1, 2, 3]
        distances[label] = checks[1].distance
        passed[label] = checks[1].passed
    # The hash is colour-blind (the red button hashes like the blue one); the colour check
    # beside it is not: only the unchanged form passes.
    assert distances["unchanged"] <= 4 and distances["red, as dark as the blue"] <= 4, distances
    assert min(distances["moved"], distances["white"]) > 10, distances
    assert passed == {label: label == "unchanged" for label in passed}, passed
    # Replays of the white-button form: stopped at the button whatever the threshold; below
    # its distance by the hash, from there on by the colour check.
    changed = distances["white"]
    outcomes = {}
    for threshold in sorted({0, 4, 10, changed - 1, changed, 64}):
        app = start_form(colour=WHITE)
        result = replay(backend, recorded, visual_validation_threshold=threshold)
        reached = app.settle(backend)
        outcomes[threshold] = (result.step_index, reached[:2])
        assert result.status is ReplayStatus.NEEDS_AGENT and result.step_index == 1, outcomes
        assert reached == ["entry"], outcomes
        reason = f"> threshold {threshold}" if threshold < changed else "colours differ"
        assert reason in result.message, outcomes


def test_parameter_replay_types_the_substituted_text(
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    recorded: CacheFile,
) -> None:
    app = start_form()
    result = replay(backend, recorded, name="Grace Hopper")
    assert result.status is ReplayStatus.COMPLETED, result.message
    typed = app.wait_for(
        lambda event: event["type"] == "text" and event["text"] == "Grace Hopper", "the typed name"
    )
    assert typed["text"] == "Grace Hopper"
    submitted = app.wait_for(lambda event: event.get("target") == "submit", "the submit click")
    assert submitted["text"] == "Grace Hopper"
