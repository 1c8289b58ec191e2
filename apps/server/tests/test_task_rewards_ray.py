"""Rewards and done on the wire on the ``ray`` provider: ``viewfinder serve --env desktop
--provider ray`` on a real Ray cluster of two nodes on this machine, the task's episode in
a session actor (its checker runs there), driven by OpenEnv's MCPToolClient and
GenericEnvClient."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from openenv.core.generic_client import GenericEnvClient

from viewfinder.core.testing import running, wait_until
from viewfinder.ray.testing import (
    LocalCluster,
    descendants,
    local_cluster,
    session_actor_processes,
)

from .test_task_rewards import solved_unsolved_and_step_limited, task

#: Every process of the server's session actors seen by the tests (actors and below).
seen: set[int] = set()


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with local_cluster([{"viewfinder_display": 1}, {"viewfinder_display": 1}]) as running_cluster:
        yield running_cluster


@pytest.fixture(scope="module")
def ray_server(
    cluster: LocalCluster,
    tmp_path_factory: pytest.TempPathFactory,
    start_ray_server: Callable[..., tuple[subprocess.Popen[bytes], str]],
) -> Iterator[str]:
    """``viewfinder serve --env desktop --provider ray --allow-any-app``; after it stops,
    no session actor nor anything it started is left."""
    folder: Path = tmp_path_factory.mktemp("ray-tasks")
    process, base = start_ray_server(
        cluster.address, folder, 2, "--env", "desktop", "--allow-any-app"
    )
    try:
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
    log = (folder / "server.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
    assert seen
    wait_until(
        lambda: not session_actor_processes() and not any(running(pid) for pid in seen),
        "every session actor, its display and its apps, to exit with the server",
    )


def note_actors() -> int:
    actors = session_actor_processes()
    for actor in actors:
        seen.update({actor} | descendants(actor))
    return len(actors)


async def test_solved_unsolved_and_step_limited_on_ray(ray_server: str) -> None:
    await solved_unsolved_and_step_limited(ray_server, during=note_actors)


def test_generic_client_reward_and_done_on_ray(ray_server: str) -> None:
    with GenericEnvClient(base_url=ray_server, message_timeout_s=120).sync() as env:
        reset = env.reset(task=task())
        assert reset.observation["metadata"]["instruction"].startswith("Type Ada")
        assert (reset.reward, reset.done) == (0.0, False)
        assert note_actors() >= 1  # the episode runs in a session actor
        steps = [
            {"action": "left_click", "coordinate": [190, 35]},
            {"action": "type", "text": "Ada"},
            {"action": "left_click", "coordinate": [70, 220]},
        ]
        results = [
            env.step({"type": "call_tool", "tool_name": "computer", "arguments": arguments})
            for arguments in steps
        ]
        assert [(r.reward, r.done) for r in results] == [(0.0, False), (0.0, False), (1.0, True)]
        assert results[-1].observation["metadata"]["ended"] == "solved"
        workdir = reset.observation["metadata"]["workdir"]
        log = Path(workdir, "form.log").read_text().splitlines()
        assert log == ["click name", "click save", "saved Ada"]
