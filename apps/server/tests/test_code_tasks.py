"""Code tasks that score themselves: a reset with a task places its files in the run's
home, and every step's observation carries the checker's reward and done, over the run's
output, its files and its last capture, through OpenEnv's own GenericEnvClient."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any

import httpx
from openenv.core.generic_client import GenericEnvClient
from PIL import Image

from viewfinder.server import LocalServer

RED_WINDOW = """
import tkinter as tk
root = tk.Tk()
root.overrideredirect(True)
root.geometry("200x100+0+0")
tk.Frame(root, bg="{colour}", width=200, height=100).pack()
root.update()
capture_screenshot()
"""


def picture(colour: tuple[int, int, int]) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 40), colour).save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def task(**changes: Any) -> dict[str, Any]:
    """Add the numbers of numbers.txt, write the sum to sum.txt, print it, and show a
    red window: partial credit for each part."""
    return {
        "id": "sum",
        "env": "code",
        "instruction": "Add the numbers in numbers.txt; print the sum, write it to "
        "sum.txt, and show it in a red window at the top left.",
        "files": {"numbers.txt": "3 4 35"},
        "max_steps": 3,
        "partial": True,
        "check": {
            "all": [
                {"output": {"matches": r"^42$", "exit_code": 0}},
                {"file": {"path": "sum.txt", "equals": "42"}},
                {"screen": {"region": [20, 20, 40, 40], "picture": picture((255, 0, 0))}},
            ]
        },
        **changes,
    }


SUM = "total = sum(map(int, open('numbers.txt').read().split()))\nprint(total)\n"
WRITE = "open('sum.txt', 'w').write(str(total))\n"


def step(env: Any, code: str) -> Any:
    return env.step({"code": code})


def test_solved_unsolved_and_step_limited(serve: Callable[..., LocalServer]) -> None:
    server = serve(env="code")
    with GenericEnvClient(base_url=server.base_url, message_timeout_s=120).sync() as env:
        reset = env.reset(task=task())
        metadata = reset.observation["metadata"]
        assert metadata["instruction"].startswith("Add the numbers")
        assert (reset.reward, reset.done, metadata["max_steps"]) == (0.0, False, 3)
        printed = step(env, SUM)
        assert printed.observation["stdout"] == "42\n"  # it read the task's file
        assert (round(printed.reward, 3), printed.done) == (0.333, False)  # one part of three
        written = step(env, WRITE)
        # the file is written, but the output check reads this step's run: it printed nothing
        assert (round(written.reward, 3), written.done) == (0.333, False)
        reason = written.observation["metadata"]["reason"]
        assert reason == "1 of 3 met; stdout does not match '^42$'"
        shown = step(env, RED_WINDOW.format(colour="#ff0000") + "print(total)\n")
        assert (shown.reward, shown.done) == (1.0, True)
        assert shown.observation["metadata"]["ended"] == "solved"

        # three steps, never red: the third ends it, truncated, with the parts it met
        env.reset(task=task())
        step(env, SUM)
        step(env, WRITE)
        last = step(env, RED_WINDOW.format(colour="#0000ff") + "print(total)\n")
        assert (round(last.reward, 3), last.done) == (0.667, True)
        metadata = last.observation["metadata"]
        assert (metadata["ended"], metadata["truncated"]) == ("step_limit", True)
        assert "region [20, 20, 40, 40] is" in metadata["reason"]

        # failed for good: the task's fail check (a file it must never write)
        env.reset(task=task(fail={"file": {"path": "sum.txt", "exists": True}}))
        failed = step(env, SUM + WRITE)
        assert (failed.reward, failed.done) == (0.0, True)
        assert failed.observation["metadata"]["ended"] == "failed"

        # a reset without a task is the code env's own: no reward
        plain = env.reset()
        assert plain.reward is None
        assert step(env, "print(1)").reward is None


def test_code_tasks_refused_by_field(serve: Callable[..., LocalServer]) -> None:
    server = serve(env="code")
    desktop = httpx.post(f"{server.base_url}/reset", json={"task": task(env="desktop")}, timeout=60)
    assert desktop.status_code == 422
    assert desktop.json()["detail"][0]["msg"].startswith("task.env: 'desktop' tasks run on")
    bad = task(check={"output": {"stream": "stdin"}})
    refused = httpx.post(f"{server.base_url}/reset", json={"task": bad}, timeout=60)
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"][-2:] == ["output", "stream"]
    answer = httpx.post(f"{server.base_url}/reset", json={"task": task()}, timeout=60)
    assert answer.status_code == 200, answer.text
    assert (answer.json()["reward"], answer.json()["done"]) == (0.0, False)
