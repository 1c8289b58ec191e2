"""A two-field Tk form on a real Xvfb, filled in by a scripted agent: shared by the
cache's end-to-end tests and the test of docs/cache.md's snippets.

The form reports on stdout every click, the text of each field and what was submitted,
so a test compares what the app received with what a cache file says.
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
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core import Event, EventKind, Point
from viewfinder.core.testing import wait_until
from viewfinder.xvfb import Display, XvfbBackend

DEADLINE_S = 30.0
USER, EMAIL, SUBMIT, SENTINEL, PARK = (120, 55), (120, 95), (100, 160), (615, 455), (630, 300)
PANEL_BUTTON = (420, 160)

FORM_APP = r"""
import json, sys, tkinter as tk

submit_colour, panel_delay_ms = sys.argv[1], int(sys.argv[2])
root = tk.Tk()
root.geometry("640x480+0+0")
root.configure(bg="#ececec")
def emit(**fields):
    print(json.dumps(fields), flush=True)
def entry(y, name):
    field = tk.Entry(root, insertofftime=0, highlightthickness=0, relief="flat", bg="white",
                     font=("DejaVu Sans", 14))
    field.place(x=40, y=y, width=260, height=30)
    field.bind("<Button-1>", lambda e: emit(type="click", target=name), add="+")
    field.bind("<KeyRelease>", lambda e: emit(type="text", target=name, text=field.get()),
               add="+")
    return field
user, email = entry(40, "user"), entry(80, "email")
submit = tk.Label(root, text="Submit", bg=submit_colour, fg="white", font=("DejaVu Sans", 12))
submit.place(x=40, y=140, width=120, height=40)
submit.bind("<Button-1>", lambda e: emit(type="submit", user=user.get(), email=email.get()))
# a panel that takes its time to appear after "More" is clicked
more = tk.Label(root, text="More", bg="#555555", fg="white", font=("DejaVu Sans", 12))
more.place(x=200, y=140, width=100, height=40)
panel = tk.Label(root, text="Panel", bg="#8b2e57", fg="white", font=("DejaVu Sans", 12))
panel.bind("<Button-1>", lambda e: emit(type="click", target="panel"))
def reveal():
    panel.place(x=370, y=140, width=100, height=40)
more.bind("<Button-1>", lambda e: (emit(type="click", target="more"),
                                   root.after(panel_delay_ms, reveal)))
sentinel = tk.Frame(root, bg="#333333")
sentinel.place(x=600, y=440, width=30, height=30)
sentinel.bind("<Button-1>", lambda e: emit(type="click", target="sentinel"))
root.after(200, lambda: emit(type="ready"))
root.mainloop()
"""


class FormApp:
    """The form on the display and everything it reported."""

    def __init__(self, display: Display, script: Path, colour: str, panel_delay_ms: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(script), colour, str(panel_delay_ms)],
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
                continue
            self.events.append(event)
            if match(event):
                return event
        pytest.fail(f"no event for {what} within {DEADLINE_S:g}s; saw {self.events}")

    def received(self, backend: XvfbBackend) -> list[dict[str, Any]]:
        """Everything the form got: click the sentinel and wait until it reports that."""
        backend.act(Event(kind=EventKind.CLICK, position=Point(x=SENTINEL[0], y=SENTINEL[1])))
        self.wait_for(lambda event: event.get("target") == "sentinel", "the sentinel click")
        return [
            event
            for event in self.events
            if event["type"] != "ready" and event.get("target") != "sentinel"
        ]

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
    path = tmp_path_factory.mktemp("guard-form") / "form_app.py"
    path.write_text(FORM_APP)
    return path


def still_screen(backend: XvfbBackend) -> bytes:
    """A PNG of the screen once two grabs a moment apart agree (the app has repainted)."""
    previous: list[bytes] = [b""]

    def settled() -> bool:
        now = backend.grab().tobytes()
        same = now == previous[0]
        previous[0] = now
        if not same:
            time.sleep(0.15)
        return same

    wait_until(settled, "the screen to stop changing", timeout=DEADLINE_S)
    return backend.capture().data


@pytest.fixture
def start_form(
    display: Display, backend: XvfbBackend, script: Path
) -> Iterator[Callable[..., FormApp]]:
    """``start_form(colour=..., panel_delay_ms=...)``: a fresh form, drawn, pointer parked."""
    started: list[FormApp] = []

    def start(colour: str = "#2e8b57", panel_delay_ms: int = 0) -> FormApp:
        while started:
            started.pop().close()
        app = FormApp(display, script, colour, panel_delay_ms)
        started.append(app)
        backend.act(Event(kind=EventKind.MOVE, position=Point(x=PARK[0], y=PARK[1])))
        wait_until(
            lambda: backend.grab().getpixel(SENTINEL) == (0x33, 0x33, 0x33),
            "the form to be drawn",
            timeout=DEADLINE_S,
        )
        still_screen(backend)
        return app

    yield start
    for app in started:
        app.close()


def image(backend: XvfbBackend) -> dict[str, Any]:
    data = base64.b64encode(still_screen(backend)).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def fill_in(
    backend: XvfbBackend,
    app: FormApp,
    steps: list[dict[str, Any]],
    ready: Callable[[int], None] = lambda number: None,
) -> list[Any]:
    """Perform ``steps`` as an agent would, keeping the message history it would keep.

    ``ready(number)`` waits, after step ``number``, for what the agent would wait for.
    """
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Fill in the form."}, image(backend)]}
    ]
    for number, tool_input in enumerate(steps):
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
        ready(number)
        result = {"type": "tool_result", "tool_use_id": call_id, "content": [image(backend)]}
        messages.append({"role": "user", "content": [result]})
    return messages


def click(point: tuple[int, int]) -> dict[str, Any]:
    return {"action": "left_click", "coordinate": list(point)}


LOGIN = [
    click(USER),
    {"action": "type", "text": "Ada"},
    click(EMAIL),
    {"action": "type", "text": "ada@example.org"},
    click(SUBMIT),
]


@pytest.fixture(scope="module")
def login_history(
    display: Display, backend: XvfbBackend, script: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    app = FormApp(display, script, "#2e8b57", 0)
    try:
        backend.act(Event(kind=EventKind.MOVE, position=Point(x=PARK[0], y=PARK[1])))
        messages = fill_in(backend, app, LOGIN)
        app.wait_for(lambda event: event["type"] == "submit", "the recorded submit")
    finally:
        app.close()
    path = tmp_path_factory.mktemp("login") / "messages.json"
    path.write_text(json.dumps(messages))
    return path


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(build_app(), list(args))


def built(tmp_path: Path, history: Path, *extra: str) -> Path:
    out = tmp_path / "login.json"
    result = run_cli("cache", "build", str(history), "-o", str(out), *extra)
    assert result.exit_code == 0, result.output
    return out
