"""Every snippet in docs/cache.md runs as written, on a real Tk form on a real Xvfb.

The quick start's message history is an agent's, recorded on the two-field form of
tests/cache_form.py with the user "Ada"; the snippets then replay it as "Grace".
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cache_form import (  # fixtures are used by name
    FormApp,
    backend,
    display,
    login_history,
    run_cli,
    script,
    start_form,
)
from viewfinder.cache import HealRecord, parse_cache_json
from viewfinder.xvfb import Display

__all__ = ["backend", "display", "login_history", "script", "start_form"]

DOC = Path(__file__).parents[1] / "docs" / "cache.md"


def snippets(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.S)


def submitted(app: FormApp) -> dict[str, str]:
    return app.wait_for(lambda event: event["type"] == "submit", "the replayed submit")


def test_the_command_line_quick_start(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    display: Display,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    (block,) = snippets("bash")
    monkeypatch.chdir(tmp_path)
    shutil.copy(login_history, "messages.json")
    app = start_form()
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert [shlex.split(command)[:3] for command in commands] == [
        ["viewfinder", "cache", name] for name in ("build", "show", "check", "replay", "reset")
    ]
    for command in commands:
        args = [display.name if arg == ":1" else arg for arg in shlex.split(command)[1:]]
        result = run_cli(*args)
        assert result.exit_code == 0, f"{command}: {result.output}"
    assert submitted(app) == {"type": "submit", "user": "Grace", "email": "ada@example.org"}


def test_the_python_quick_start(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    display: Display,
    start_form: Callable[..., FormApp],
    login_history: Path,
) -> None:
    (block,) = snippets("python")
    monkeypatch.chdir(tmp_path)
    shutil.copy(login_history, "messages.json")
    app = start_form()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(block.replace('":1"', repr(display.name)), {})
    assert printed.getvalue().startswith("COMPLETED None replayed 5 step(s)"), printed.getvalue()
    assert submitted(app) == {"type": "submit", "user": "Grace", "email": "ada@example.org"}
    saved = json.loads(Path("login.json").read_text())
    assert saved["trajectory"][1]["input"]["text"] == "{{user}}"


def test_the_format_example_is_a_valid_cache_file() -> None:
    block = snippets("json")[0]
    cache = parse_cache_json(block)
    assert cache.visual.active and cache.cache_parameters == {"user": "Name of the user to log in"}
    assert [block.action for block in cache.trajectory] == ["left_click", "type", "key"]


def test_the_heal_history_example_reads_as_heal_records() -> None:
    history = json.loads(snippets("json")[1])["heals"]
    records = [HealRecord.model_validate(entry) for entry in history]
    assert [(r.step_index, r.method, r.shift) for r in records] == [
        (0, "element", [120, 0]),
        (1, "template", [0, 120]),
    ]
    assert records[0].describe() in DOC.read_text().replace("\n", " ")
