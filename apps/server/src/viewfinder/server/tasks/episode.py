"""A task's episode on a desktop session: its folder, its apps, and its score after
every step (``reward`` 0..1, ``done``, ``truncated`` in the observation's metadata)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from viewfinder.server.errors import TaskRejectedError
from viewfinder.server.tasks import model
from viewfinder.server.tasks.checks import CheckerError, TaskView, evaluate


class TaskEpisode:
    """One episode of ``task``: the folder its files are placed in before its apps start
    (``{workdir}`` in an app's words), and the checker run after each step.

    ``folder``: where the files go (a code task's run home, kept by its owner); by
    default a folder of the episode's own, removed by :meth:`close`.
    ``trusted``: whether the task may name Python checkers (they run as the server's
    user: only tasks from its operator, or from clients trusted with ``--allow-any-app``).
    """

    def __init__(self, task: model.Task, *, trusted: bool, folder: Path | None = None) -> None:
        if not trusted and "python" in _kinds(task):
            raise TaskRejectedError(
                "task.check: a Python checker runs as the server's user; its operator can "
                "allow it with --allow-any-app, or use the built-in predicates"
            )
        self.task = task
        self.steps = 0
        self._owns_folder = folder is None
        self.folder = folder or Path(tempfile.mkdtemp(prefix=f"viewfinder-task-{task.id}-"))
        try:
            for relative, text in task.files.items():
                path = self.folder / model.relative_path(relative)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        except BaseException:
            self.close()
            raise
        self.view: TaskView | None = None
        self.last: dict[str, Any] = {}

    def apps(self) -> list[list[str]]:
        """The task's apps, ``{workdir}`` replaced by the episode's folder and ``{python}``
        by the Python running the env (one with Tk)."""
        folder = str(self.folder)
        return [
            [word.replace("{workdir}", folder).replace("{python}", sys.executable) for word in app]
            for app in self.task.apps
        ]

    def elements(self) -> bool:
        """Whether the desktop publishes its elements (asked, or read by the checker)."""
        if self.task.elements is not None:
            return self.task.elements or self.task.reads_elements()
        return self.task.reads_elements()

    def started(self, display_name: str, desktop: Any) -> tuple[float, dict[str, Any]]:
        """Once the desktop runs: the score now, and the reset's metadata (the task's
        instruction, its step limit, why it scores what it does)."""
        self.view = TaskView(self.folder, display_name, desktop)
        score = self.score(count=False)
        about = {
            **score["metadata"],
            "task": self.task.id,
            "instruction": self.task.instruction,
            "workdir": str(self.folder),
        }
        return score["reward"], about

    def score(self, *, count: bool = True, run: dict[str, Any] | None = None) -> dict[str, Any]:
        """After a step: ``reward``, ``done`` and the metadata that says why (``run``: a
        code task's run, for its ``output`` and ``screen`` checks)."""
        if count:
            self.steps += 1
        assert self.view is not None
        run = run if run is not None else self.view.run
        self.view = TaskView(self.view.folder, self.view.display_name, self.view.desktop, run)
        task = self.task
        try:
            outcome = evaluate(task.check, self.view, partial=task.partial)
            failed = evaluate(task.fail, self.view) if task.fail is not None else None
        except CheckerError as exc:
            return self._remember(0.0, True, f"the checker failed: {exc}", "checker_error")
        if outcome.passed:
            return self._remember(1.0, True, outcome.reason, "solved")
        if failed is not None and failed.passed:
            return self._remember(0.0, True, f"failed for good: {failed.reason}", "failed")
        if self.steps >= task.max_steps:
            return self._remember(outcome.score, True, outcome.reason, "step_limit", truncated=True)
        return self._remember(outcome.score, False, outcome.reason, None)

    def _remember(
        self, reward: float, done: bool, reason: str, why: str | None, *, truncated: bool = False
    ) -> dict[str, Any]:
        self.last = {
            "reward": round(reward, 6),
            "done": done,
            "metadata": {
                "reason": reason,
                "ended": why,
                "truncated": truncated,
                "steps": self.steps,
                "max_steps": self.task.max_steps,
            },
        }
        return self.last

    def close(self) -> None:
        """Remove the episode's folder (when it is the episode's own)."""
        if self._owns_folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def _kinds(task: model.Task) -> set[str]:
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            found.update(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    dumped = task.model_dump(mode="json", by_alias=True)
    walk(dumped["check"])
    walk(dumped["fail"])
    return found
