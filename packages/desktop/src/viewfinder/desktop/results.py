"""What a ComputerTool action gives back: the result model and its words for the model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from viewfinder.core import ElementTree, Event, EventKind, Screenshot, ViewfinderError
from viewfinder.desktop.actions import Action, ActionInputError, Api
from viewfinder.desktop.settle import SettleReport


class ComputerResult(BaseModel):
    """What one action did and what the screen shows now.

    ``screenshot``: the settled screen at the model size (a zoom: the region at full
    resolution; none for ``cursor_position``). ``text``: what was done, or the cursor
    position, for the model. ``is_error`` / ``error``: the action could not be read or
    performed; ``error`` says why in words a model can act on (``error_type`` names the
    exception). ``event``: what was performed, in SCREEN coordinates. ``settle``: how
    the wait after the action went (None for actions that only look). ``before``: the
    screen just before the action, at the model size, when it had changed visibly after
    the last screenshot the model got (the text says so); else None.
    ``elements``: the elements on the screen after the action, when the tool or the
    action asked for them (an empty tree with its reason when none could be read);
    ``elements_text``: their snapshot for the model, boxes in the screenshot's
    coordinates; ``marked``: the screenshot with their numbered boxes drawn on it, when
    the action asked for a Set-of-Mark image.
    """

    model_config = ConfigDict(frozen=True)

    action: str | None = None
    api: Api | None = None
    screenshot: Screenshot | None = None
    text: str = ""
    is_error: bool = False
    error: str | None = None
    error_type: str | None = None
    event: Event | None = None
    settle: SettleReport | None = None
    before: Screenshot | None = None
    elements: ElementTree | None = None
    elements_text: str | None = None
    marked: Screenshot | None = None


@dataclass(frozen=True)
class Seen:
    """What a result shows of the screen: the screenshot and, when asked, its elements."""

    shot: Screenshot | None
    elements: ElementTree | None = None
    elements_text: str | None = None
    marked: Screenshot | None = None

    def result(self, **fields: Any) -> ComputerResult:
        """A result carrying what was seen, with ``fields``."""
        return ComputerResult(
            screenshot=self.shot,
            elements=self.elements,
            elements_text=self.elements_text,
            marked=self.marked,
            **fields,
        )


def describe_action(action: Action) -> str:
    """What an action did, in a few words for the model (model coordinates)."""
    where = f" at ({action.position[0]}, {action.position[1]})" if action.position else ""
    if action.element is not None:
        where = f" on element {action.element}"
    kind = action.kind
    if kind is EventKind.KEY:
        times = f" {action.repeat} times" if action.repeat > 1 else ""
        return f"pressed {'+'.join(action.keys)}{times}"
    if kind is EventKind.HOLD_KEY:
        return f"held {'+'.join(action.keys)} for {action.duration_s:g} s"
    if kind is EventKind.TYPE:
        into = f" into element {action.element} (clicked first)" if action.element else ""
        return f"typed {len(action.text or '')} characters{into}"
    if kind is EventKind.WAIT:
        return f"waited {action.duration_s:g} s"
    held = f" holding {'+'.join(action.modifiers)}" if action.modifiers else ""
    if kind is EventKind.DRAG:
        start = action.start or (action.path[0] if action.path else None)
        end = action.position or (action.path[-1] if action.path else None)
        return f"{action.name} from {start} to {end}{held}"
    if kind is EventKind.MOVE:
        return f"moved the pointer{where.replace(' at', ' to')}"
    if kind is EventKind.SCROLL:
        amount = action.wheel if action.api == "anthropic" else action.scroll_pixels
        unit = "wheel clicks" if action.api == "anthropic" else "px"
        return f"scrolled by {list(amount)} {unit} (x, y){where}{held}"
    return f"{action.name}{where or ' where the pointer is'}{held}"


def describe_settle(report: SettleReport) -> str:
    """How the wait after an action went, for the model."""
    if not report.handled:
        return (
            f"the app had not handled the action by the {report.deadline_s:g} s deadline "
            "(it is busy or hung); no change on the screen yet"
        )
    busy = (
        f" (the app was busy: it handled the action after {report.busy_s:.2f} s)"
        if report.busy_s is not None
        else ""
    )
    if not report.changed:
        return f"no change on the screen within {report.waited_s:.2f} s{busy}"
    if not report.settled:
        return (
            f"the screen was still changing at the {report.deadline_s:g} s deadline; "
            f"this is how it looked after {report.waited_s:.2f} s"
        )
    small = " (a small change only)" if report.small else ""
    return f"the screen changed{small} and settled after {report.waited_s:.2f} s{busy}"


def failure_result(
    error: ViewfinderError, name: str | None, shot: Screenshot | None
) -> ComputerResult:
    """The result of an action that could not be read or performed: ``error``'s words
    (naming the action ``name``), and the screen as it is now (``shot``; None when it
    could not be grabbed)."""
    if (
        isinstance(error, ActionInputError)
        and error.action is None
        and name
        and error.field not in (None, "action", "type")  # those errors name the action
    ):
        error.action = name
    message = str(error)
    return ComputerResult(
        action=name,
        screenshot=shot,
        text=message,
        is_error=True,
        error=message,
        error_type=type(error).__name__,
    )
