"""Bundled agents for ``viewfinder tasks run --agent``.

An agent is a callable ``agent(observation) -> action | None``: ``observation`` is a
dict with the task (``task``: its JSON, ``instruction``), the step number (``step``)
and the env's last answer (``last``: ``observation``, ``reward``, ``done``); the action
is a tool call, ``{"tool": "computer", "arguments": {...}}``; None ends the episode.
"""

from __future__ import annotations

from typing import Any


def scripted(observation: dict[str, Any]) -> dict[str, Any] | None:
    """Plays the task's ``solution``, one action per step, then stops."""
    solution = observation["task"].get("solution") or []
    step = observation["step"]
    return solution[step] if step < len(solution) else None


def nothing(observation: dict[str, Any]) -> None:
    """Does nothing: the episode ends at once, scored as the task started."""
    return None


#: The bundled agents by short name.
BUNDLED = {"scripted": scripted, "nothing": nothing}
