"""A task episode written as a session folder the viewer opens (``viewfinder view``).

The folder is a desktop run in the recorder's format (:class:`viewfinder.desktop.steps.
StepLog`): ``metadata.json``, ``manifest.jsonl`` with one line per ``computer`` action
(in screen pixels), and ``screenshots/N.png``, the screen just before each action.
Beside them, ``task.json``: the task, and after every step the checker's reward, done
and reason, so the viewer's folder shows what was asked and how it was scored.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from viewfinder.core import Event, EventFormatError, ViewfinderError
from viewfinder.core.screenshot import utc_now

log = logging.getLogger(__name__)

#: Computer actions that only look: no manifest line (they change nothing).
LOOKS = frozenset({"screenshot", "zoom", "cursor_position"})
TASK_FILE = "task.json"


class EpisodeRecording:
    """Writes one episode's ``computer`` actions into ``folder`` (new or empty)."""

    def __init__(self, folder: str | os.PathLike[str], desktop: Any, task: Any) -> None:
        from viewfinder.desktop.steps import StepLog

        self.folder = Path(folder)
        self.desktop = desktop
        self._log = StepLog(desktop.size, desktop.display_name, self.folder)
        self._about: dict[str, Any] = {
            "task": None
            if task is None
            else task.model_dump(mode="json", by_alias=True, exclude_none=True),
            "scores": [],
        }
        self._write_about()

    def before(self, name: str, arguments: Any, scaling: Any = None) -> None:
        """Keep the action a tool call is about to make, with the screen before it."""
        if name != "computer" or not isinstance(arguments, dict):
            return
        action = str(arguments.get("action", ""))
        if action in LOOKS or "element" in arguments:
            return  # an element's action is placed by the tool: no point to keep
        screen_args = dict(arguments)
        try:
            if scaling is not None:
                for key in ("coordinate", "start_coordinate"):
                    point = screen_args.get(key)
                    if isinstance(point, list | tuple) and len(point) == 2:
                        screen_args[key] = list(scaling.to_screen(*point, field=key))
            event = Event.from_computer_use(screen_args)
            frame = self.desktop.screenshot().to_pil()
            self._log.add(event, frame, utc_now(), {"action": action, "api": "anthropic"})
        except (EventFormatError, ViewfinderError, ValueError, TypeError) as exc:
            # a malformed action is the tool's to refuse; the recording goes on without it
            log.debug("episode recording: %s not kept: %s", action, exc)

    def scored(self, tool: str, outcome: dict[str, Any]) -> None:
        """Note the checker's verdict after a step."""
        metadata = outcome.get("metadata", {})
        self._about["scores"].append(
            {
                "step": metadata.get("steps"),
                "tool": tool,
                "reward": outcome.get("reward"),
                "done": outcome.get("done"),
                "reason": metadata.get("reason"),
                "ended": metadata.get("ended"),
            }
        )
        self._write_about()

    def close(self) -> None:
        """Write what is pending and close the folder."""
        self._log.close()

    def _write_about(self) -> None:
        try:
            (self.folder / TASK_FILE).write_text(json.dumps(self._about, indent=1))
        except OSError as exc:
            log.warning("episode recording: cannot write %s: %s", self.folder / TASK_FILE, exc)
