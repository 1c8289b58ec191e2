"""The cache-replay agent (``--agent cache:PATH``): a cache recorded from a starter
task's scripted solution replays to a score of 1, and a cache whose screen is not
there stops before acting (the episode ends, nothing clicked)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from viewfinder.cache.frames import RecordedStep, frame_of
from viewfinder.cache.models import ToolUseBlock
from viewfinder.cache.recording import record
from viewfinder.cache.store import save_cache_file
from viewfinder.core.capture import get_backend
from viewfinder.server.tasks.cache_agent import CacheReplayAgent
from viewfinder.server.tasks.command import app as tasks_app
from viewfinder.server.tasks.model import Suite, load_tasks
from viewfinder.server.tasks.runner import load_agent, run_suite

from .test_tasks_suite import SUITE, clicks_in


def one(task_id: str) -> Suite:
    suite = load_tasks(SUITE)
    return Suite(name=task_id, tasks=[task for task in suite.tasks if task.id == task_id])


def recorded_cache(task_id: str, path: Path) -> Path:
    """Play ``task_id``'s scripted solution, capturing the screen before each action,
    and write the steps as a cache file."""
    scripted = load_agent("scripted")
    steps: list[RecordedStep] = []
    display: list[str] = []

    def recording(observation: dict[str, Any]) -> Any:
        if observation["step"] == 0:
            display.append(observation["last"]["observation"]["metadata"]["display"])
        action = scripted(observation)
        if action is not None:
            with get_backend("xvfb", display=display[0]) as screen:
                frame = frame_of(screen.capture(), f"step {len(steps)}")
            block = ToolUseBlock(id=f"step{len(steps)}", name="computer", input=action["arguments"])
            steps.append(RecordedStep(block=block, frame=frame))
        return action

    [result] = run_suite(one(task_id), recording)
    assert result.reward == 1.0
    save_cache_file(record(steps, goal=task_id), path)
    return path


def test_a_recorded_cache_replays_to_a_score_of_one(tmp_path: Path) -> None:
    cache = recorded_cache("form-name", tmp_path / "form-name.json")
    agent = load_agent(f"cache:{cache}")
    assert isinstance(agent, CacheReplayAgent)
    seen: list[list[str]] = []
    [result] = run_suite(
        one("form-name"), agent, on_result=lambda r: seen.append(clicks_in(r.workdir or ""))
    )
    assert (result.reward, result.success, result.steps) == (1.0, True, 1), result.agent_note
    assert agent.outcomes == {"form-name": "COMPLETED"}
    assert result.agent_note == "COMPLETED: replayed 3 step(s) from cache"
    assert seen == [["name", "save"]]  # the app's log: only the recorded targets

    # a folder of caches by task id, through the command: a task without one is not played
    folder = tmp_path / "caches"
    folder.mkdir()
    shutil.copy(cache, folder / "form-name.json")
    two = load_tasks(SUITE).model_dump(mode="json", by_alias=True)
    suite = tmp_path / "two.json"
    suite.write_text(json.dumps({"name": "two", "tasks": two["tasks"][:2]}))
    out = tmp_path / "results.json"
    ran = CliRunner().invoke(
        tasks_app, ["run", str(suite), "--agent", f"cache:{folder}", "--output", str(out)]
    )
    assert ran.exit_code == 0, ran.output
    rows = json.loads(out.read_text())["results"]
    assert [(row["task"], row["reward"], row["steps"], row["agent_note"]) for row in rows] == [
        ("form-name", 1.0, 1, "COMPLETED: replayed 3 step(s) from cache"),
        ("form-subscribe", 0.0, 0, "NO_CACHE"),
    ], rows  # fmt: skip


def test_a_cache_whose_screen_changed_hands_back_and_clicks_nothing(tmp_path: Path) -> None:
    cache = recorded_cache("form-name", tmp_path / "form-name.json")
    # the first step's region as if it had looked otherwise when recorded (every bit of
    # its hash flipped), with no picture to heal it by: the replay needs an agent
    data = json.loads(cache.read_text())
    first = data["trajectory"][0]
    hashed = first["visual_representation"]
    flipped = ~int(hashed, 16) & (16 ** len(hashed) - 1)
    first["visual_representation"] = format(flipped, f"0{len(hashed)}x")
    first.pop("visual_thumbnail", None)
    first.pop("visual_element", None)
    cache.write_text(json.dumps(data))
    agent = load_agent(f"cache:{cache}")
    assert isinstance(agent, CacheReplayAgent)
    seen: list[list[str]] = []
    [result] = run_suite(
        one("form-name"), agent, on_result=lambda r: seen.append(clicks_in(r.workdir or ""))
    )
    assert agent.outcomes == {"form-name": "NEEDS_AGENT"}
    assert (result.reward, result.success, result.steps) == (0.0, False, 1)
    assert result.agent_note is not None
    assert result.agent_note.startswith("NEEDS_AGENT: Visual validation failed at step 0")
    assert seen == [[]]  # stopped before acting


def test_a_cache_agent_path_that_is_nothing_is_refused(tmp_path: Path) -> None:
    ran = CliRunner().invoke(
        tasks_app, ["run", str(SUITE), "--agent", f"cache:{tmp_path / 'missing'}"]
    )
    assert ran.exit_code == 2
    assert "no such file or folder" in ran.output
