"""A third-party checker in one file: named by a task as ``checkers:saved_once``.

A checker is called with the episode's view (``viewfinder.server.tasks.checks.TaskView``)
and returns a bool, a score from 0 to 1, or ``(score, reason)``.
"""

from __future__ import annotations

from typing import Any


def saved_once(view: Any) -> tuple[float, str]:
    """The form was saved exactly once (its log has one ``saved`` line)."""
    log = (view.text("form.log") or "").splitlines()
    lines = [line for line in log if line.startswith("saved")]
    return (1.0 if len(lines) == 1 else 0.0), f"the form was saved {len(lines)} time(s)"
