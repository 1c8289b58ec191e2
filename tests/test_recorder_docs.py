"""Every snippet in docs/recorder.md runs as written, with real X input on a real Tk form."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from viewfinder.cli.app import build_app
from viewfinder.core import Event
from viewfinder.core.testing import wait_until
from viewfinder.recorder import from_ai_mime, to_ai_mime
from viewfinder.xvfb import Display

ROOT = Path(__file__).parents[1]
DOC = ROOT / "docs" / "recorder.md"
FORM = ROOT / "packages" / "recorder" / "tests" / "form_app.py"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.fixture(scope="module")
def display() -> Iterator[Display]:
    with Display(800, 600) as started:
        yield started


@pytest.fixture
def form(display: Display) -> Iterator[dict[str, Any]]:
    process = subprocess.Popen(
        [sys.executable, str(FORM)], env=display.env(), stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield json.loads(process.stdout.readline())
    finally:
        process.kill()
        process.wait(10)


def xdotool(display: Display, *args: str) -> None:
    subprocess.run(["xdotool", *args], env=display.env(), check=True, timeout=20)


def act_on(display: Display, layout: dict[str, Any]) -> None:
    """What the quick start's person does: click into the entry, type, save."""
    x, y, _, h = layout["entry"]
    xdotool(display, "mousemove", str(x + 40), str(y + h // 2), "click", "1")
    xdotool(display, "type", "hello")
    xdotool(display, "key", "ctrl+s")


def test_the_console_quick_start_and_the_folder_it_makes(
    tmp_path: Path, display: Display, form: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    (console,) = blocks("console")
    commands = [line[2:] for line in console.splitlines() if line.startswith("$ ")]
    record, *after = [shlex.split(command.split("#")[0]) for command in commands]
    assert record[:2] == ["viewfinder", "record"]
    monkeypatch.chdir(tmp_path)
    args = [display.name if arg == ":1" else arg for arg in record[1:]]
    viewfinder = str(Path(sys.executable).parent / "viewfinder")
    process = subprocess.Popen(
        [viewfinder, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    assert process.stdout is not None
    lines.append(process.stdout.readline())
    assert lines[0].startswith(f"recording xvfb on {display.name} into "), lines
    act_on(display, form)
    while not lines[-1].lstrip().startswith("#2"):
        line = process.stdout.readline()
        assert line, lines
        lines.append(line)
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=60)
    assert process.returncode == 0, [*lines, rest]
    assert "recorded 3 events (1 click, 1 key, 1 type)" in rest
    assert [line.split()[1:3] for line in lines[1:]] == [
        ["click", f"({form['entry'][0] + 40},"],
        ["type", "'hello'"],
        ["key", "ctrl+s"],
    ]
    for command in after:
        result = CliRunner().invoke(build_app(), command[1:])
        assert result.exit_code == 0, f"{command}: {result.output}"
    assert json.loads(Path("trajectory.json").read_text())["steps"][1]["event"]["text"] == "hello"
    (tree,) = re.findall(r"```\n(session/\n.*?)```", DOC.read_text(), flags=re.S)
    names = re.findall(r"([\w.]+\.(?:png|jsonl|json))", tree)
    assert len(names) == 7, names
    for name in names:
        if name.endswith(".png"):
            assert (Path("session/screenshots") / name).is_file(), name
        else:
            assert (Path("session") / name).is_file(), name


def test_the_python_snippets(
    tmp_path: Path, display: Display, form: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    listening, programmatic = blocks("python")
    monkeypatch.chdir(tmp_path)

    def person_acts(prompt: str) -> str:
        act_on(display, form)
        wait_until(lambda: (tmp_path / "session" / "screenshots" / "1.png").exists(), "2 lines")
        return ""

    monkeypatch.setattr("builtins.input", person_acts)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(listening.replace(":1", display.name), {})
    size = f"({display.width}, {display.height})"
    assert printed.getvalue().splitlines() == [
        f"{kind} {size}" for kind in ("click", "type", "key")
    ]
    exec(programmatic.replace(":1", display.name), {})
    manifest = (tmp_path / "run" / "manifest.jsonl").read_text().splitlines()
    assert [json.loads(line)["kind"] for line in manifest] == [
        "click",
        "type",
        "key",
        "scroll",
        "double_click",
    ]


def test_the_example_lines_read_back() -> None:
    manifest, ai_mime, with_element = blocks("json")
    events = [Event.from_manifest(json.loads(line)) for line in manifest.splitlines()]
    (named,) = [Event.from_manifest(json.loads(line)) for line in with_element.splitlines()]
    assert named.element is not None and named.element.describe() == "push button 'Save'"
    assert named.element.box is not None and named.position is not None
    box, point = named.element.box, named.position
    assert box.x <= point.x < box.right and box.y <= point.y < box.bottom
    assert [event.kind.value for event in events][:3] == ["click", "type", "key"]
    for line, event in zip(ai_mime.splitlines(), events, strict=False):
        read = from_ai_mime(json.loads(line))
        assert read.kind == event.kind
        assert to_ai_mime(read)["action_type"] == event.kind.value
    assert os.path.basename(str(DOC)) == "recorder.md"
