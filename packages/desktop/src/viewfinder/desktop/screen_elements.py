"""The elements on a ComputerTool's screen: read for results, for element actions, for steps.

One element source per tool (made on first use, kept for the tool's life: refs stay
the same for the same elements across its calls). What it gives the tool:

- the tree as it is just before an action: the element an action names by ref is
  looked up there (:meth:`ScreenElements.centre`: the centre of its box, or
  :class:`ElementGoneError`), and the element under a pointer action's point goes into
  the step's event (:meth:`ScreenElements.anchored`);
- the tree after the action, as a text snapshot in the model's coordinates
  (:func:`viewfinder.core.snapshot_text`) within a token budget, and the elements to
  mark on the screenshot (:func:`viewfinder.core.set_of_mark`).

A read that fails (no accessibility bus: an empty tree with its reason; an app that
stops answering) never fails an action that only wanted the snapshot: the tree is
then empty and its reason says why. An action on an element needs the read, and fails
with the read's error.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from viewfinder.core import Event, EventKind, ViewfinderError
from viewfinder.core.element import Element, ElementTree
from viewfinder.core.geometry import Region
from viewfinder.core.result_budget import ResultBudget

if TYPE_CHECKING:
    from viewfinder.core.element_sources import ElementSource

#: Tokens a snapshot may take at most, for a client that takes more text than this.
SNAPSHOT_TOKENS = 2000
#: The source the tool reads a desktop's elements with.
SOURCE = "atspi"
#: Event kinds whose point is where the pointer acts: their step records its element.
ANCHORED_KINDS = frozenset(
    {
        EventKind.CLICK,
        EventKind.DOUBLE_CLICK,
        EventKind.TRIPLE_CLICK,
        EventKind.RIGHT_CLICK,
        EventKind.MIDDLE_CLICK,
        EventKind.SCROLL,
        EventKind.MOVE,
        EventKind.MOUSE_DOWN,
        EventKind.MOUSE_UP,
        EventKind.DRAG,
    }
)


log = logging.getLogger(__name__)


class ElementGoneError(ViewfinderError, LookupError):
    """An action named an element (by ref) that is not on the screen now.

    ``ref`` is the ref it named; ``element`` the element as an earlier read of the
    tool knew it (None when no read had that ref); ``why_none``: the reason of a read
    that found no elements at all (no accessibility bus, apps that expose none).
    """

    def __init__(self, ref: str, element: Element | None, why_none: str = "") -> None:
        self.ref = ref
        self.element = element
        named = f" ({element.role} {element.name!r})" if element and element.name else ""
        if element is not None and not named:
            named = f" ({element.role})"
        where = (
            "is no longer on the screen"
            if element is not None
            else "is not on the screen (no element read in this session has that ref)"
        )
        empty = f" (no elements can be read there now: {why_none})" if why_none else ""
        super().__init__(
            f"element {ref}{named} {where}{empty}; take a screenshot with elements to get "
            "fresh refs"
        )


class ElementCoveredError(ViewfinderError, LookupError):
    """An action named an element that a pointer at its middle would not reach: another
    window is in front there (another application's, or another window of its own), or
    another element is under that point. Nothing is done.

    ``ref`` and ``element`` name it; ``reason`` says what is in the way (the window by
    its X id and owning process, or the element there); ``window`` is the front
    window's title, when one is known.
    """

    def __init__(self, ref: str, element: Element, reason: str, window: str = "") -> None:
        self.ref = ref
        self.element = element
        self.reason = reason
        self.window = window
        named = f"{element.role} {element.name!r}" if element.name else element.role
        super().__init__(
            f"element {ref} ({named}) cannot be acted on at its middle: {reason}; nothing "
            "was done. Close or move what is in front, or act on an element that shows"
        )


class ElementDisabledError(ViewfinderError, LookupError):
    """An action named an element its application marks as not usable now (greyed
    out: AT-SPI's ``sensitive`` and ``enabled`` are both missing; a page's
    ``disabled``). Nothing is done: a click there would do nothing, or something else.

    ``ref`` and ``element`` name it.
    """

    def __init__(self, ref: str, element: Element) -> None:
        self.ref = ref
        self.element = element
        named = f"{element.role} {element.name!r}" if element.name else element.role
        super().__init__(
            f"element {ref} ({named}) is disabled: nothing was done. Do what enables it "
            "first (fill in what it needs), or act on another element"
        )


def snapshot_tokens(budget: ResultBudget) -> int:
    """The tokens a snapshot may take in a result of ``budget``'s client: at most
    :data:`SNAPSHOT_TOKENS`, and at most a quarter of the client's text."""
    limits = [SNAPSHOT_TOKENS, budget.text_tokens // 4]
    if budget.text_chars:
        limits.append(budget.text_chars // 16)  # a token is 3-4 characters of a snapshot
    return max(20, min(limits))


class ScreenElements:
    """The elements of display ``display_name`` for one ComputerTool.

    ``source``: an element source to read with (default: ``atspi`` on the display,
    made on first use and closed with this object; a source given is left open).
    ``enabled``: whether results carry the snapshot and steps their element when an
    action does not say. ``scale``: model pixels per screen pixel, ``(x, y)``: one
    factor per axis, as the tool's :class:`~viewfinder.desktop.scaling.Scaling` shrinks
    the screen (a 1280x800 screen shown at 1024x768 is ``(0.8, 0.96)``).
    """

    def __init__(
        self,
        display_name: str,
        *,
        source: ElementSource | None,
        enabled: bool,
        max_tokens: int,
        scale: tuple[float, float] = (1.0, 1.0),
    ) -> None:
        self.display_name = display_name
        self.enabled = enabled
        self.scale = scale
        self.max_tokens = max_tokens
        self._source = source
        self._owned = source is None
        self._known: dict[str, Element] = {}
        self._x: Any = None  # an X connection: which window is in front of an element

    def wanted(self, asked: bool | None) -> bool:
        """Whether a result carries the elements: as the action asked, else the option."""
        return self.enabled if asked is None else asked

    def read(self) -> ElementTree:
        """The tree now (the source's errors pass through)."""
        tree = self.source().read()
        self._known.update((element.ref, element) for element in tree.walk())
        return tree

    def read_or_reason(self) -> ElementTree:
        """The tree now; a read that failed is an empty tree whose reason says why."""
        try:
            return self.read()
        except ViewfinderError as exc:
            return ElementTree(source=SOURCE, reason=f"the elements could not be read: {exc}")

    def source(self) -> ElementSource:
        """The source the reads use (made on first use)."""
        if self._source is None:
            from viewfinder.core.element_sources import get_element_source

            self._source = get_element_source(SOURCE, display=self.display_name)
        return self._source

    def centre(self, tree: ElementTree, ref: str) -> tuple[int, int]:
        """The screen point at the middle of element ``ref``'s box in ``tree``;
        :class:`ElementGoneError` when the tree has no visible element ``ref``,
        :class:`ElementDisabledError` when it is disabled,
        :class:`ElementCoveredError` when a click there would not reach it (another
        window in front, another element under the point: see
        :func:`viewfinder.xvfb.top_window.refusal`)."""
        element = tree.find(ref)
        if element is None or not element.visible or element.box is None:
            why_none = tree.reason if not tree.roots else ""
            raise ElementGoneError(ref, element or self._known.get(ref), why_none)
        if "disabled" in element.states:
            raise ElementDisabledError(ref, element)
        box = element.box
        x, y = box.x + box.width // 2, box.y + box.height // 2
        if tree.source == SOURCE:  # its boxes are this display's: ask its X server
            from viewfinder.xvfb.top_window import refusal

            reason = refusal(self._x_connection(), tree, element, x, y)
            if reason is not None:
                raise ElementCoveredError(ref, element, reason)
        return (x, y)

    def anchored(self, event: Event, tree: ElementTree | None) -> Event:
        """``event`` with the element under its point (a drag: where it starts) from
        ``tree``, read just before it; unchanged when there is none."""
        if tree is None or event.kind not in ANCHORED_KINDS:
            return event
        point = event.start_position or event.position
        if point is None:
            return event
        if tree.source == SOURCE and tree.roots:
            from viewfinder.xvfb.top_window import element_in_front

            # only in the window the X server shows in front there: the step names
            # nothing where another app's window covers the point
            element, _ = element_in_front(self._x_connection(), tree, point.x, point.y)
        else:
            element = tree.element_at(point.x, point.y)
        if element is None:
            return event
        return event.model_copy(update={"element": tree.anchor(element)})

    def windowed(self, event: Event) -> Event:
        """``event`` with the application whose window is in front at its point (a drag:
        where it starts; :func:`viewfinder.xvfb.top_window.application_at`), asked just
        before it: a replay of the step acts only where that application's window is
        in front again. Unchanged for other kinds, or when the X server cannot say."""
        point = event.start_position or event.position
        if event.kind not in ANCHORED_KINDS or point is None or event.window is not None:
            return event
        from Xlib.error import ConnectionClosedError, XError

        from viewfinder.xvfb.top_window import application_at

        try:
            window = application_at(self._x_connection(), point.x, point.y)
        except (XError, ConnectionClosedError, OSError, ViewfinderError) as exc:
            # the display is going away: the action itself says so
            log.debug("no window named for %s: %s", event.kind.value, exc)
            return event
        return event if window is None else event.model_copy(update={"window": window})

    def _x_connection(self) -> Any:
        if self._x is None:
            from viewfinder.xvfb.connection import open_display

            self._x = open_display(self.display_name)
        return self._x

    def snapshot(self, tree: ElementTree) -> str:
        """The text snapshot of ``tree`` in the model's coordinates, within the budget."""
        from viewfinder.core.element_snapshot import snapshot_text

        return snapshot_text(tree, scale=self.scale, max_tokens=self.max_tokens)

    def close(self) -> None:
        source, self._source = self._source, None
        if source is not None and self._owned:
            source.close()
        if self._x is not None:
            from viewfinder.xvfb.connection import close_quietly

            close_quietly(self._x)
            self._x = None


def read_or_reason(source: ElementSource) -> ElementTree:
    """``source.read()``; a read that failed is an empty tree whose reason says why."""
    try:
        return source.read()
    except ViewfinderError as exc:
        return ElementTree(source=source.name, reason=f"the elements could not be read: {exc}")


def within(tree: ElementTree, region: Region) -> ElementTree:
    """``tree`` as seen in a capture of ``region``: boxes moved to the region's origin
    and clipped to it; an element outside the region has no box (it is not shown)."""

    def moved(element: Element) -> Element:
        box = element.box
        if box is not None:
            left, top = max(box.x, region.x), max(box.y, region.y)
            right, bottom = min(box.right, region.right), min(box.bottom, region.bottom)
            box = (
                Region(x=left - region.x, y=top - region.y, width=right - left, height=bottom - top)
                if right > left and bottom > top
                else None
            )
        children = tuple(moved(child) for child in element.children)
        return element.model_copy(update={"box": box, "children": children})

    return tree.model_copy(update={"roots": tuple(moved(root) for root in tree.roots)})
