"""OpenAI's ``computer`` tool: a ``computer_call`` whose ``actions`` batch runs in order.

The GA computer tool (``{"type": "computer"}``) may send several actions in one call::

    {"type": "computer_call", "call_id": "call_1", "actions": [
        {"type": "click", "button": "left", "x": 10, "y": 20},
        {"type": "type", "text": "hello"}, {"type": "keypress", "keys": ["ENTER"]}]}

:func:`run_computer_call` performs them one after the other on a
:class:`~viewfinder.desktop.ComputerTool` (each settles before the next starts) and
gives one :class:`~viewfinder.desktop.ComputerResult` for the call: the screen after
the last, and the text of every action. When an action fails, the rest are not run:
the result is an error that says which actions ran, which one failed and why, and which
were skipped. A call with a single ``action`` runs as one action.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from viewfinder.desktop.actions import action_name
from viewfinder.desktop.results import ComputerResult

if TYPE_CHECKING:
    from viewfinder.desktop.computer import ComputerTool

#: Most actions one call may carry.
MAX_BATCH = 50


def call_actions(call: Any) -> list[Any]:
    """The actions of a ``computer_call`` (a dict or the SDK's model): its ``actions``
    batch, else its one ``action``, as dicts."""
    data = call.model_dump(exclude_none=True) if hasattr(call, "model_dump") else call
    if not isinstance(data, Mapping):
        return [data]
    batch = data.get("actions")
    if batch is None:
        return [data.get("action")]
    return list(batch) if isinstance(batch, Sequence) and not isinstance(batch, str) else [batch]


def run_computer_call(tool: ComputerTool, call: Any) -> ComputerResult:
    """Perform every action of ``call`` in order; one result for the call (see the
    module docstring). Never raises for a bad action or a display that has gone."""
    actions = call_actions(call)
    if len(actions) == 1:
        return tool(actions[0], api="openai")
    names = [action_name(action) or "?" for action in actions]
    if not actions or len(actions) > MAX_BATCH:
        problem = "has no actions" if not actions else f"has {len(actions)} actions"
        message = (
            f"computer_call: actions {problem}; allowed: 1 to {MAX_BATCH} actions, run in order"
        )
        return ComputerResult(
            action="batch", api="openai", text=message, is_error=True, error=message
        )
    results: list[ComputerResult] = []
    for action in actions:
        result = tool(action, api="openai")
        results.append(result)
        if result.is_error:
            break
    last = results[-1]
    lines = [
        f"{number}. {names[number - 1]}: {result.text}" for number, result in enumerate(results, 1)
    ]
    if not last.is_error:
        text = f"ran {len(actions)} actions in order:\n" + "\n".join(lines)
        return last.model_copy(update={"action": "batch", "text": text})
    failed = len(results)
    ran = _span(1, failed - 1, names)
    skipped = _span(failed + 1, len(actions), names)
    summary = (
        f"action {failed} of {len(actions)} ({names[failed - 1]}) failed: {last.error}; "
        + (f"{ran} ran before it" if ran else "no action ran before it")
        + "; "
        + (f"{skipped} were skipped (not run)" if skipped else "no action was left")
    )
    return last.model_copy(
        update={
            "action": "batch",
            "text": summary + "\n" + "\n".join(lines[:-1]),
            "error": summary,
        }
    )


def _span(first: int, last: int, names: list[str]) -> str:
    """``actions 1-2 (click, type)``; empty when ``first > last``."""
    if first > last:
        return ""
    which = f"action {first}" if first == last else f"actions {first}-{last}"
    return f"{which} ({', '.join(names[first - 1 : last])})"
