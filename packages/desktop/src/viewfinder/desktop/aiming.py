"""Where a ComputerTool action acts: its event in screen coordinates, tied to the element
and the window at its point.

An action that names an element (``"element": "e12"``) acts at that element's centre
as it is now; one that names no place acts where the pointer is. Typing into an element
clicks it first, so the keys go to it.
"""

from __future__ import annotations

from collections.abc import Callable

from viewfinder.core import Event, EventKind
from viewfinder.desktop.actions import Action
from viewfinder.desktop.scaling import Scaling
from viewfinder.desktop.screen_elements import ANCHORED_KINDS, ScreenElements

#: The kinds that act where the pointer is when the action names no place.
POINTER_KINDS = ANCHORED_KINDS - {
    EventKind.MOVE,
    EventKind.MOUSE_DOWN,
    EventKind.MOUSE_UP,
    EventKind.DRAG,
}


def aim(
    action: Action,
    elements: ScreenElements,
    scaling: Scaling,
    pointer: Callable[[], tuple[int, int]],
) -> tuple[Event, Event | None, list[tuple[int, int]] | None]:
    """The event ``action`` performs (anchored to the element at its point and named by
    the window there), the click that first focuses an element it types into (else
    None), and a drag's path on the screen (else None). ``pointer()``: where the pointer
    is, asked only when the action acts there."""
    tree = None
    if action.element is not None:  # the pre-action state: where the element is now
        tree = elements.read()
    elif elements.enabled and action.kind in ANCHORED_KINDS:
        tree = elements.read_or_reason()
    at = elements.centre(tree, action.element) if tree and action.element else None
    needs_pointer = action.position is None and at is None and action.kind in POINTER_KINDS
    event = action.to_event(scaling, pointer() if needs_pointer else (0, 0), at)
    path = action.screen_path(scaling) if action.path else None
    focus = None
    if event.kind is EventKind.TYPE and at is not None:  # into the element: click it first
        focus = Event(kind=EventKind.CLICK, position=event.position, button="left")
        focus = elements.windowed(elements.anchored(focus, tree))
        event = event.model_copy(update={"position": None})
    return elements.windowed(elements.anchored(event, tree)), focus, path
