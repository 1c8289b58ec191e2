"""The starter suite (examples/tasks/starter.toml), run by ``viewfinder tasks run``'s
runner over an env pool: each scripted solution scores 1.0, doing nothing scores 0.0,
and the apps' own logs show no click but on the named targets."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from viewfinder.server.tasks.command import app as tasks_app
from viewfinder.server.tasks.model import load_tasks
from viewfinder.server.tasks.runner import EpisodeResult, load_agent, run_suite

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "examples" / "tasks" / "starter.toml"

#: The widget each solution's click lands on, in order, as the apps log them.
LABELS = {
    (190, 35): "name", (70, 220): "save", (40, 85): "subscribe", (60, 135): "red",
    (300, 300): "text", (50, 23): "save", (40, 35): "dark_mode", (70, 170): "ok",
    (140, 37): "email", (70, 100): "submit", (220, 91): "name", (80, 156): "submit",
}  # fmt: skip


def clicks_in(workdir: str) -> list[str]:
    lines: list[str] = []
    for log in sorted(Path(workdir).glob("*.log")):
        lines += [line[6:] for line in log.read_text().splitlines() if line.startswith("click ")]
    return lines


def test_the_starter_suite_has_eight_tasks_or_more() -> None:
    suite = load_tasks(SUITE)
    assert len(suite.tasks) >= 8
    assert all(task.solution for task in suite.tasks)


def test_scripted_solutions_score_one_and_click_only_their_targets() -> None:
    suite = load_tasks(SUITE)
    seen: dict[str, list[str]] = {}

    def read_logs(result: EpisodeResult) -> None:
        # the episode's folder lives until its session's next reset: read it now
        assert result.workdir is not None
        seen[result.task] = clicks_in(result.workdir)

    results = run_suite(suite, load_agent("scripted"), parallel=2, on_result=read_logs)
    assert [(r.task, r.reward, r.success) for r in results] == [
        (task.id, 1.0, True) for task in suite.tasks
    ], [r.reason for r in results]
    for task in suite.tasks:
        expected = [
            LABELS[tuple(step["arguments"]["coordinate"])]
            for step in task.solution or []
            if step["arguments"]["action"] == "left_click"
        ]
        assert seen[task.id] == expected, task.id


def test_doing_nothing_scores_zero() -> None:
    suite = load_tasks(SUITE)
    seen: dict[str, list[str]] = {}
    results = run_suite(
        suite, load_agent("nothing"), parallel=2,
        on_result=lambda r: seen.__setitem__(r.task, clicks_in(r.workdir or "")),
    )  # fmt: skip
    assert [(r.task, r.reward, r.success, r.steps) for r in results] == [
        (task.id, 0.0, False, 0) for task in suite.tasks
    ]
    assert all(reason for reason in (r.reason for r in results))
    assert set(map(tuple, seen.values())) == {()}  # nothing was clicked


def test_tasks_run_writes_json_and_a_table(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    suite = load_tasks(SUITE).model_dump(mode="json", by_alias=True)
    one.write_text(json.dumps({"name": "one", "tasks": [suite["tasks"][0]]}))
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        tasks_app, ["run", str(one), "--agent", "scripted", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    # the table names each episode's session folder (recorded beside --output by default)
    assert re.search(r"form-name\s+yes\s+1\.00\s+3 .* 000-form-name\s+form.json", result.output)
    assert "1/1 solved" in result.output
    written = json.loads(out.read_text())
    assert (written["solved"], written["results"][0]["reward"]) == (1, 1.0)
    session = Path(written["results"][0]["session"])
    assert session.parent.parent == tmp_path / "viewfinder-episodes"
    assert (session / "manifest.jsonl").read_text().count("\n") == 3


def test_a_third_party_checker_in_one_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "tasks"))
    suite = load_tasks(SUITE).model_dump(mode="json", by_alias=True)
    task: dict[str, Any] = suite["tasks"][0]
    task.pop("fail")
    task["check"] = {"python": "checkers:saved_once"}
    unsaved = {**task, "id": "unsaved", "solution": task["solution"][:-1]}
    path = tmp_path / "checker.json"
    path.write_text(json.dumps({"tasks": [task, unsaved]}))
    results = run_suite(load_tasks(path), load_agent("scripted"))
    assert [(r.reward, r.reason) for r in results] == [
        (1.0, "the form was saved 1 time(s)"),
        (0.0, "the form was saved 0 time(s)"),
    ]
