"""A code task's episode: the code env's session with a checker over its runs.

A reset with a task (``{"task": {...}}`` in the reset's data, ``env = "code"``) places
the task's files in the run's home (the worker's working directory) and returns the
instruction in the observation's metadata; every step's observation then carries the
checker's ``reward`` and ``done``. The checker reads the step's output (``output``), the
home's files (``file``, ``log``) and the step's last capture (``screen``), here, outside
the run's sandbox.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from viewfinder.server.errors import TaskRejectedError
from viewfinder.server.tasks.episode import TaskEpisode

if TYPE_CHECKING:
    from viewfinder.codeenv import CodeAction, CodeEnvironment, CodeObservation
    from viewfinder.server.tasks.model import Task


class ScoredCodeEnvironment:
    """A :class:`~viewfinder.codeenv.CodeEnvironment` whose resets may take a task;
    everything else is the code env's own."""

    def __init__(self, env: CodeEnvironment, *, trusted: bool) -> None:
        self._env = env
        self._trusted = trusted
        self._episode: TaskEpisode | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._env, name)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: Task | None = None,
        **options: Any,
    ) -> CodeObservation:
        """A new episode (the code env's reset), with ``task``'s files and checker."""
        if task is not None:
            if task.env != "code":
                raise TaskRejectedError(
                    f"task.env: {task.env!r} tasks run on a {task.env} server; this one "
                    'serves code tasks (env = "code")'
                )
            if task.apps:
                raise TaskRejectedError(
                    "task.apps: a code task starts no apps; start them from its code"
                )
        self._episode = None
        observation = self._env.reset(seed, episode_id, **options)
        if task is None:
            return observation
        worker = self._env.worker
        assert worker is not None and worker.home is not None
        episode = TaskEpisode(task, trusted=self._trusted, folder=worker.home)
        if worker.uid is not None and worker.uid != os.geteuid():
            # a sandbox user's home: the files placed in it are that user's
            from viewfinder.codeenv.session_space import chown_tree

            chown_tree(worker.home, worker.uid)
        display = self._env.display
        reward, about = episode.started(display.name if display is not None else "", None)
        self._episode = episode
        observation.metadata.update(about)
        observation.reward = reward
        return observation

    def step(self, action: CodeAction, timeout_s: float | None = None, **options: Any) -> Any:
        """Run the action's code; with a task, its observation is scored."""
        observation = self._env.step(action, timeout_s, **options)
        episode = self._episode
        if episode is None:
            return observation
        run = {
            "stdout": observation.stdout,
            "stderr": observation.stderr,
            "exit_code": observation.exit_code,
            "screenshot": observation.screenshot,
        }
        scored = episode.score(run=run)
        observation.metadata.update(scored["metadata"])
        observation.reward = scored["reward"]
        observation.done = scored["done"]
        return observation

    def close(self) -> None:
        """Close the code env (the home goes with its episode)."""
        self._episode = None
        self._env.close()
