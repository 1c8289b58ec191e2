"""The cache-replay agent (``viewfinder tasks run --agent cache:PATH``).

It plays a cache file (:mod:`viewfinder.cache`) on the episode's screen with the
:class:`~viewfinder.cache.executor.CacheExecutor`: each step's region is checked
against the file's hash before it is acted on, a step whose target only moved is
healed (found again by its element or its picture), and a replay that needs an agent
(a region that changed past healing) stops before acting and hands back to nothing:
the episode ends there. Replay returns once the app has handled its last step (see
``ExecutionSettings.handled_timeout``), so one ``screenshot`` call then lets the checker
score what the replay left: the screen and the files the app wrote.

``PATH`` is one cache file for every task, or a folder with one per task
(``<task id>.json``; a task without one is not played). The replay acts on the
episode's X display itself, so it needs the display on this machine: the ``local``
provider.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from viewfinder.core.errors import ViewfinderError

if TYPE_CHECKING:
    from viewfinder.cache.replay_models import ReplayResult

log = logging.getLogger(__name__)

#: Seconds between two replayed actions (the executor's default is a cautious 1 s).
DELAY_S = 0.3
#: The call that lets the checker score the screen after the replay.
LOOK = {"tool": "screenshot", "arguments": {}}


class CacheAgentError(ViewfinderError, ValueError):
    """A ``cache:PATH`` agent whose PATH is no cache file nor folder of them."""


class CacheReplayAgent:
    """Plays a cache file per episode (see the module's docs). Stateless between
    episodes: several workers may share it."""

    def __init__(self, path: str | Path) -> None:
        from viewfinder.cache.store import read_cache_file

        self.path = Path(path)
        if self.path.is_file():
            read_cache_file(self.path)  # a file that is no cache is refused now
        elif not self.path.is_dir():
            raise CacheAgentError(
                f"cache:{path}: no such file or folder; give a cache file, or a folder "
                "with <task id>.json cache files"
            )
        #: How each task's replay ended (``COMPLETED``, ``NEEDS_AGENT``, ...), by task id.
        self.outcomes: dict[str, str] = {}
        #: How and why, in the replay's words (:attr:`ReplayResult.summary`), by task id.
        self.notes: dict[str, str] = {}

    def file_for(self, task_id: str) -> Path | None:
        """The cache file a task plays, or None."""
        if self.path.is_file():
            return self.path
        candidate = self.path / f"{task_id}.json"
        return candidate if candidate.is_file() else None

    def note(self, task_id: str) -> str | None:
        """How ``task_id``'s replay ended and why (the task runner's ``agent_note``)."""
        return self.notes.get(task_id)

    def __call__(self, observation: dict[str, Any]) -> dict[str, Any] | None:
        if observation["step"] > 0:
            return None  # the replay ran at the first step; the look scored it
        task_id = observation["task"]["id"]
        cache = self.file_for(task_id)
        metadata = observation["last"].get("observation", {}).get("metadata", {})
        display = metadata.get("display")
        if cache is None or not display:
            self.outcomes[task_id] = self.notes[task_id] = (
                "NO_CACHE" if cache is None else "NO_DISPLAY"
            )
            return None
        result = self.replay(cache, display)
        self.outcomes[task_id], self.notes[task_id] = result.status.value, result.summary
        return dict(LOOK)

    def replay(self, cache: Path, display: str) -> ReplayResult:
        """Replay ``cache`` on ``display``; how it ended, and why."""
        from viewfinder.cache.executor import CacheExecutor
        from viewfinder.cache.replay_models import ExecutionSettings
        from viewfinder.core.capture import get_backend

        settings = ExecutionSettings(delay_time_between_actions=DELAY_S, heal_display=display)
        with get_backend("xvfb", display=display) as screen:
            result = CacheExecutor(screen, settings).run(cache, save=False)
        log.info("cache replay of %s on %s: %s", cache, display, result.message)
        return result
