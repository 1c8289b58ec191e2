"""Cache replays that never act blind or half-done, on a real Tk form on a real Xvfb.

A scripted agent fills in a two-field form through the xvfb backend (XTest input) and
keeps its message history; the cache files are built from it by the CLI, as the docs'
quick start does. The form reports on stdout every click, the text of each field and
what was submitted, so each test compares what the app received with what the file says.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
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

from viewfinder.cache import (
    CacheError,
    CacheExecutor,
    CacheFileError,
    ExecutionSettings,
    ReplayStatus,
)
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


def test_the_quick_start_replays_with_another_value(
    tmp_path: Path,
    display: Display,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    login = built(tmp_path, login_history, "-p", "user=Ada")
    steps = json.loads(login.read_text())["trajectory"]
    assert [step["input"]["action"] for step in steps] == [s["action"] for s in LOGIN]
    assert steps[1]["input"]["text"] == "{{user}}"
    # the click into the second field sees the first field's text: masked, not compared
    assert steps[2]["visual_mask"] and steps[3]["visual_point"] == list(EMAIL)
    app = start_form()
    shown = run_cli("cache", "show", str(login))
    assert "visual validation: phash" in shown.output and "{{user}}" in shown.output
    checked = run_cli("cache", "check", str(login), "--display", display.name)
    assert checked.exit_code == 0, checked.output
    replayed = run_cli("cache", "replay", str(login), "--display", display.name, "-p", "user=Grace")
    assert replayed.exit_code == 0, replayed.output
    assert replayed.output.startswith("COMPLETED")
    submitted = app.wait_for(lambda event: event["type"] == "submit", "the replayed submit")
    assert submitted == {"type": "submit", "user": "Grace", "email": "ada@example.org"}


def test_a_slow_repaint_gets_its_settle_time(
    tmp_path: Path,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
) -> None:
    app = start_form(panel_delay_ms=1500)

    def panel_shown(number: int) -> None:
        if number == 0:
            wait_until(
                lambda: backend.grab().getpixel((374, 144)) == (0x8B, 0x2E, 0x57),
                "the panel to appear",
                timeout=DEADLINE_S,
            )

    messages = fill_in(backend, app, [click((250, 160)), click(PANEL_BUTTON)], panel_shown)
    app.wait_for(lambda event: event.get("target") == "panel", "the recorded panel click")
    history = tmp_path / "panel.json"
    history.write_text(json.dumps(messages))
    cache = built(tmp_path, history)
    hurried = ExecutionSettings(delay_time_between_actions=0, settle_time=0)
    app = start_form(panel_delay_ms=1500)
    early = CacheExecutor(backend, hurried).run(cache, save=False)
    assert early.status is ReplayStatus.NEEDS_AGENT and early.step_index == 1, early.message
    patient = ExecutionSettings(delay_time_between_actions=0, settle_time=DEADLINE_S)
    app = start_form(panel_delay_ms=1500)
    result = CacheExecutor(backend, patient).run(cache)
    assert result.status is ReplayStatus.COMPLETED, result.message
    assert [e.get("target") for e in app.received(backend)] == ["more", "panel"]


def test_validity_is_restored_by_a_good_replay_and_by_reset(
    tmp_path: Path,
    display: Display,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    login = built(tmp_path, login_history, "-p", "user=Ada")
    for _ in range(3):
        start_form(colour="#c83232")  # the Submit button turned red: step 4 stops
        stopped = run_cli(
            "cache", "replay", str(login), "-d", display.name, "--delay", "0", "-p", "user=X"
        )
        assert stopped.exit_code == 3 and "step 4" in stopped.output, stopped.output
    assert "INVALID" in run_cli("cache", "show", str(login)).output
    start_form()
    refused = run_cli("cache", "replay", str(login), "-d", display.name, "-p", "user=X")
    assert refused.exit_code == 3 and "marked invalid" in refused.output
    forced = run_cli(
        "cache", "replay", str(login), "-d", display.name, "-p", "user=X", "--allow-invalid"
    )
    assert forced.exit_code == 0, forced.output
    meta = json.loads(login.read_text())["metadata"]
    assert meta["is_valid"] and not meta["failures"] and meta["execution_attempts"] == 4
    data = json.loads(login.read_text())
    data["metadata"].update(is_valid=False, invalidation_reason="marked by hand")
    login.write_text(json.dumps(data))
    reset = run_cli("cache", "reset", str(login))
    assert reset.exit_code == 0 and "was invalid: marked by hand" in reset.output
    start_form()
    again = run_cli("cache", "replay", str(login), "-d", display.name, "-p", "user=Y")
    assert again.exit_code == 0, again.output


def test_a_block_without_enabled_is_validated(
    tmp_path: Path,
    display: Display,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "metadata": {
                    "version": "0.3",
                    "visual_validation": {"method": "phash", "region_size": 100, "threshold": 10},
                },
                "trajectory": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "computer",
                        "input": click(SUBMIT),
                        "visual_representation": "0000000000000000",
                    }
                ],
            }
        )
    )
    assert "visual validation: phash" in run_cli("cache", "show", str(seed)).output
    app = start_form()
    result = run_cli("cache", "replay", str(seed), "-d", display.name, "--settle", "0")
    assert result.exit_code == 3 and "Visual validation failed at step 0" in result.output
    assert app.received(backend) == []


def five_clicks_then(bad: dict[str, Any]) -> list[dict[str, Any]]:
    steps = [click(USER), click(EMAIL), click(USER), click(EMAIL), click(USER), bad]
    return [
        {"type": "tool_use", "id": f"toolu_{n}", "name": "computer", "input": step}
        for n, step in enumerate(steps)
    ]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"action": "left_clack", "coordinate": [10, 10]}, "trajectory[5].input"),
        ({"action": "key", "text": "ctrl+Nonsense"}, "trajectory[5].input.text"),
        ({"action": "left_click", "coordinate": [10]}, "trajectory[5].input.coordinate"),
        ({"action": "left_click", "coordinate": ["10", "20"]}, "trajectory[5].input.coordinate"),
        ({"action": "left_click", "coordinate": [True, 20]}, "trajectory[5].input.coordinate"),
        ({"action": "left_click", "coordinate": [700, 20]}, "trajectory[5].input.coordinate"),
        ({"action": "type", "text": "a\x07b"}, "trajectory[5].input.text"),
    ],
)
def test_a_bad_step_is_found_before_anything_is_performed(
    tmp_path: Path,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    bad: dict[str, Any],
    field: str,
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"trajectory": five_clicks_then(bad)}))
    app = start_form()
    with pytest.raises(CacheFileError) as caught:
        CacheExecutor(backend, ExecutionSettings(delay_time_between_actions=0)).run(path)
    assert f"step 5: {field}" in str(caught.value) and "\n" not in str(caught.value)
    assert app.received(backend) == []
    assert json.loads(path.read_text()) == {"trajectory": five_clicks_then(bad)}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            json.dumps({"trajectory": five_clicks_then(click(USER))}).replace(
                "[120, 55]", "[NaN, 55]", 1
            ),
            "NaN",
        ),
        ("[" * 100_000 + "]" * 100_000, "nests JSON too deeply"),
    ],
)
def test_unreadable_numbers_and_nesting_are_one_line_errors(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "odd.json"
    path.write_text(text)
    result = run_cli("cache", "show", str(path))
    assert result.exit_code == 1 and problem in result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


@contextlib.contextmanager
def small_folder(tmp_path: Path) -> Iterator[tuple[Path, Callable[[], None]]]:
    """A folder and a way to make it read-only: a tmpfs remounted ro as root, else chmod."""
    folder = tmp_path / "storage"
    folder.mkdir()
    if os.geteuid() != 0:
        yield folder, lambda: folder.chmod(0o555)
        folder.chmod(0o755)
        return
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], check=True)
    try:
        yield folder, lambda: subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_read_only_storage_is_refused_before_anything_is_performed(
    tmp_path: Path, backend: XvfbBackend, start_form: Callable[..., FormApp]
) -> None:
    with small_folder(tmp_path) as (folder, make_read_only):
        path = folder / "clicks.json"
        path.write_text(json.dumps({"trajectory": five_clicks_then(click(SUBMIT))}))
        make_read_only()
        app = start_form()
        with pytest.raises(CacheError, match="nothing was performed"):
            CacheExecutor(backend, ExecutionSettings(delay_time_between_actions=0)).run(path)
        assert app.received(backend) == []
        unsaved = CacheExecutor(backend, ExecutionSettings(delay_time_between_actions=0)).run(
            path, save=False
        )
        assert unsaved.status is ReplayStatus.COMPLETED


def test_a_write_back_that_fails_after_acting_is_a_warning(
    tmp_path: Path, backend: XvfbBackend, start_form: Callable[..., FormApp]
) -> None:
    with small_folder(tmp_path) as (folder, make_read_only):
        path = folder / "clicks.json"
        original = json.dumps({"trajectory": five_clicks_then(click(SUBMIT))})
        path.write_text(original)
        app = start_form()
        pauses: list[float] = []

        def pause(seconds: float) -> None:
            if not pauses:
                make_read_only()  # the storage goes away mid-replay
            pauses.append(seconds)

        settings = ExecutionSettings(delay_time_between_actions=0.01)
        result = CacheExecutor(backend, settings, sleep=pause).run(path)
        assert result.status is ReplayStatus.COMPLETED and result.acted == [0, 1, 2, 3, 4, 5]
        assert result.warnings and "recording it in" in result.warnings[0]
        assert any(event["type"] == "submit" for event in app.received(backend))
        assert path.read_text() == original


def test_parameters_fill_only_placeholders_and_must_be_used(
    tmp_path: Path,
    display: Display,
    backend: XvfbBackend,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    login = built(tmp_path, login_history, "-p", "x=a")
    steps = json.loads(login.read_text())["trajectory"]
    assert [step["input"]["action"] for step in steps] == [s["action"] for s in LOGIN]
    assert steps[1]["input"]["text"] == "Ad{{x}}" and steps[3]["input"]["text"].count("{{x}}") == 3
    unused = run_cli(
        "cache", "build", str(login_history), "-o", str(tmp_path / "u.json"), "-p", "user=Nobody"
    )
    assert unused.exit_code == 1 and "no step typed the text of parameter(s) user" in unused.output
    bogus = run_cli(
        "cache",
        "build",
        str(login_history),
        "-o",
        str(tmp_path / "b.json"),
        "--hashed-actions",
        "bogus",
    )
    assert bogus.exit_code == 1 and "unknown action(s) to hash: bogus" in bogus.output
    app = start_form()
    unknown = run_cli(
        "cache", "replay", str(login), "-d", display.name, "-p", "x=e", "-p", "usr=Grace"
    )
    assert unknown.exit_code == 1 and "usr are not used by any step" in unknown.output
    assert app.received(backend) == []
