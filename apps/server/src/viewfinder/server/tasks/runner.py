"""Runs a suite's episodes with an agent, ``parallel`` at a time, over an env pool.

Each worker owns one session of an :class:`~viewfinder.server.pool.EnvPool` (the
``local`` provider, or ``ray``) and plays tasks from a shared queue on it: a reset with
the task, then the agent's actions until the episode is done, the agent stops, or the
task's step limit. A result per task: success, reward, steps, seconds, the checker's
reason.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from viewfinder.core.providers import import_path
from viewfinder.server.tasks.agents import BUNDLED
from viewfinder.server.tasks.model import Suite, Task

Agent = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class EpisodeResult:
    """How one task's episode ended."""

    task: str
    success: bool
    reward: float
    steps: int
    seconds: float
    reason: str
    truncated: bool = False
    error: str | None = None
    #: The episode's folder (its files, its apps' logs), until the session's next reset.
    workdir: str | None = None
    #: The episode's session folder (``viewfinder view`` opens it), when recorded.
    session: str | None = None
    #: What the agent says of its episode (an agent with a ``note(task_id)`` method; the
    #: cache agent: how its replay ended, and why).
    agent_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_agent(spec: str) -> Agent:
    """A bundled agent by name (``scripted``, ``nothing``), ``cache:PATH`` (replays a
    cache file, :mod:`.cache_agent`) or ``module:function``."""
    if spec in BUNDLED:
        return BUNDLED[spec]
    if spec.startswith("cache:"):
        from viewfinder.server.tasks.cache_agent import CacheReplayAgent

        return CacheReplayAgent(spec.removeprefix("cache:"))
    agent = import_path(spec, "agent")
    if not callable(agent):
        raise TypeError(f"agent {spec!r} is not callable")
    return agent


def run_suite(
    suite: Suite,
    agent: Agent,
    *,
    parallel: int = 1,
    provider: str = "local",
    provider_options: dict[str, Any] | None = None,
    on_result: Callable[[EpisodeResult], None] | None = None,
    sessions: str | os.PathLike[str] | None = None,
) -> list[EpisodeResult]:
    """Every task's episode with ``agent``, ``parallel`` at once; results in suite order.

    ``sessions``: a folder that receives each episode as a session folder the viewer
    opens, ``<NNN>-<task id>`` (complete once this returns: the last frames are written
    as the sessions close)."""
    folder = Path(sessions).resolve() if sessions is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    from viewfinder.server.pool import EnvPool
    from viewfinder.server.settings import ServerSettings

    size = suite.tasks[0].size or (1280, 800)
    # the suite is the operator's own: its apps and Python checkers may run
    settings = ServerSettings(
        env="desktop", allow_any_app=True, pool_size=min(parallel, 4),
        display_width=size[0], display_height=size[1],
    )  # fmt: skip
    todo: queue.Queue[tuple[int, Task]] = queue.Queue()
    for item in enumerate(suite.tasks):
        todo.put(item)
    results: dict[int, EpisodeResult] = {}
    lock = threading.Lock()
    workers = min(parallel, len(suite.tasks))
    with EnvPool(
        workers, provider, "desktop", settings=settings, provider_options=provider_options
    ) as pool:

        def work(env: Any) -> None:
            while True:
                try:
                    index, task = todo.get_nowait()
                except queue.Empty:
                    return
                record_to = folder / f"{index:03d}-{task.id}" if folder is not None else None
                result = play(env, task, agent, record_to=record_to)
                with lock:
                    results[index] = result
                if on_result is not None:
                    on_result(result)

        threads = [threading.Thread(target=work, args=(env,), daemon=True) for env in pool.envs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return [results[index] for index in sorted(results)]


def play(env: Any, task: Task, agent: Agent, *, record_to: Path | None = None) -> EpisodeResult:
    """One episode of ``task`` on ``env`` (a desktop session) with ``agent``; recorded
    into the folder ``record_to`` when given."""
    from viewfinder.server.desktop_task import DesktopTask
    from viewfinder.server.mcp_wire import CallToolAction, step_payload

    started = time.monotonic()
    steps, last, first = 0, {}, {}
    try:
        record = str(record_to) if record_to is not None else None
        last = first = env.reset(DesktopTask(task=task, record_to=record))
        data = task.model_dump(mode="json", by_alias=True)
        while not last.get("done") and steps < task.max_steps:
            action = agent(
                {"task": data, "instruction": task.instruction, "step": steps, "last": last}
            )
            if action is None:
                break
            call = CallToolAction(tool_name=action["tool"], arguments=action.get("arguments", {}))
            last = step_payload(env.step(call))
            steps += 1
    except Exception as exc:
        return EpisodeResult(
            task.id, False, 0.0, steps, round(time.monotonic() - started, 3),
            f"the episode failed: {exc}", error=type(exc).__name__,
            session=str(record_to) if record_to is not None and record_to.exists() else None,
        )  # fmt: skip
    metadata = last.get("observation", {}).get("metadata", {})
    workdir = first.get("observation", {}).get("metadata", {}).get("workdir")
    note = getattr(agent, "note", None)
    reward = float(last.get("reward") or 0.0)
    return EpisodeResult(
        task=task.id,
        success=reward >= 1.0,
        reward=reward,
        steps=steps,
        seconds=round(time.monotonic() - started, 3),
        reason=str(metadata.get("reason", "")),
        truncated=bool(metadata.get("truncated", False)),
        workdir=workdir,
        session=str(record_to) if record_to is not None else None,
        agent_note=note(task.id) if callable(note) else None,
    )
