"""Rewards and done on the wire: a reset with a task returns its instruction, and every
step's observation carries the checker's reward and done, through OpenEnv's own
MCPToolClient and POST /reset, for a solved, an unsolved and a step-limited episode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from openenv.core.env_server.mcp_types import CallToolAction
from openenv.core.mcp_client import MCPToolClient

from viewfinder.server import LocalServer
from viewfinder.server.tasks.model import load_tasks

ROOT = Path(__file__).resolve().parents[3]
TASK = load_tasks(ROOT / "examples" / "tasks" / "starter.toml").tasks[0]  # form-name


def task(**changes: Any) -> dict[str, Any]:
    return {**TASK.model_dump(mode="json", by_alias=True, exclude_none=True), **changes}


def click(x: int, y: int) -> CallToolAction:
    return CallToolAction(
        tool_name="computer", arguments={"action": "left_click", "coordinate": [x, y]}
    )


async def test_solved_unsolved_and_step_limited(serve: Callable[..., LocalServer]) -> None:
    server = serve(env="desktop", allow_any_app=True)
    await solved_unsolved_and_step_limited(server.base_url)


async def solved_unsolved_and_step_limited(
    base_url: str, during: Callable[[], int] = lambda: 1
) -> None:
    """A solved, a step-limited and a failed episode of form-name through OpenEnv's
    MCPToolClient, on the server at ``base_url`` (any provider); ``during()`` is called
    while the first episode runs (it must not return 0)."""
    async with MCPToolClient(base_url=base_url, message_timeout_s=120) as env:
        reset = await env.reset(task=task())
        metadata = reset.observation.metadata
        assert metadata["instruction"] == TASK.instruction
        assert (reset.reward, reset.done, metadata["max_steps"]) == (0.0, False, 6)
        assert during()
        name = await env.step(click(190, 35))
        assert (name.reward, name.done) == (0.0, False)  # not solved yet
        assert name.observation.metadata["reason"] == "form.json does not exist"
        await env.step(
            CallToolAction(tool_name="computer", arguments={"action": "type", "text": "Ada"})
        )
        saved = await env.step(click(70, 220))
        log = Path(metadata["workdir"], "form.log")
        about = (saved.observation.metadata.get("reason"), log.read_text().splitlines())
        assert (saved.reward, saved.done) == (1.0, True), about
        assert saved.observation.metadata["ended"] == "solved"
        assert saved.observation.metadata["truncated"] is False
        assert log.read_text().splitlines() == ["click name", "click save", "saved Ada"]

        # two steps allowed, neither solves it: the second ends the episode, truncated
        await env.reset(task=task(max_steps=2))
        first = await env.step(click(190, 35))
        assert (first.reward, first.done) == (0.0, False)
        last = await env.step(click(190, 35))
        assert (last.reward, last.done) == (0.0, True)
        assert last.observation.metadata["truncated"] is True
        assert last.observation.metadata["ended"] == "step_limit"

        # failed for good: the task's fail check (a click on Blue)
        await env.reset(task=task())
        failed = await env.step(click(150, 135))
        assert (failed.reward, failed.done) == (0.0, True)
        assert failed.observation.metadata["ended"] == "failed"


def test_http_reset_with_a_task_and_bad_tasks_refused_by_field(
    serve: Callable[..., LocalServer],
) -> None:
    server = serve(env="desktop", allow_any_app=True)
    answer = httpx.post(f"{server.base_url}/reset", json={"task": task()}, timeout=60)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["observation"]["metadata"]["instruction"] == TASK.instruction
    assert (body["reward"], body["done"]) == (0.0, False)
    bad = task(check={"all": [{"element": {"rolee": "entry"}}]})
    refused = httpx.post(f"{server.base_url}/reset", json={"task": bad}, timeout=60)
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == [
        "body", "task", "check", "all", "all", 0, "element", "element", "rolee"
    ]  # fmt: skip


def test_python_checkers_need_a_trusting_server(serve: Callable[..., LocalServer]) -> None:
    server = serve(env="desktop")
    checked = task(apps=[], check={"python": "os:getcwd"})
    answer = httpx.post(f"{server.base_url}/reset", json={"task": checked}, timeout=60)
    assert answer.status_code == 422
    assert "Python checker" in answer.json()["detail"][0]["msg"]
    # a recording is written as the server's user, too
    recorded = {"task": task(apps=[]), "record_to": "/tmp/viewfinder-not-written"}
    answer = httpx.post(f"{server.base_url}/reset", json=recorded, timeout=60)
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["msg"].startswith("record_to: a recording is written")
    assert not Path("/tmp/viewfinder-not-written").exists()
