"""What is on a screen, named: elements of an accessibility tree.

An :class:`Element` is one node a source read (an AT-SPI accessible of an X11 app, a
node of a page's accessibility tree): its role, name, value, states, the box it covers
in screen pixels, and a ``ref`` ("e12") that names the same element on the next read
of the same session. An :class:`ElementTree` is one read: the top-level elements, and
a ``reason`` when it is empty (an app that exposes nothing, Tk, says so there).

A leaf module: it imports only core models.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from viewfinder.core.geometry import Region

#: Roles an agent can act on: a snapshot keeps these even when they have no name.
INTERACTIVE_ROLES = frozenset(
    {
        "button",
        "check box",
        "check menu item",
        "checkbox",
        "combo box",
        "combobox",
        "entry",
        "link",
        "list item",
        "listbox",
        "menu",
        "menu item",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "page tab",
        "password text",
        "push button",
        "radio button",
        "radio menu item",
        "radio",
        "scroll bar",
        "scrollbar",
        "searchbox",
        "slider",
        "spin button",
        "spinbutton",
        "switch",
        "tab",
        "text",
        "textbox",
        "toggle button",
        "tree item",
        "treeitem",
    }
)


class Element(BaseModel):
    """One element on a screen: what it is, what it says, where it is.

    - ``ref``: stable within a session: the same element has the same ref on every
      read of that session. "The same" is the toolkit's own identity of it where the
      source has one (an AT-SPI object's bus name and path, a page node's backend id),
      so an insert, a reorder or a rename never moves a ref; else its path of role,
      name and index among its like-named siblings.
    - ``role``: lower-case words as the source names it (``"push button"`` from
      AT-SPI, ``"button"`` from a page).
    - ``box``: the rectangle it covers, in screen pixels (page CSS pixels where the
      source cannot place the page on a screen: see :attr:`ElementTree.coordinates`);
      None when it has no area on the screen (hidden, scrolled away, zero-sized).
    - ``states``: lower-case names (``"focused"``, ``"visible"``, ``"showing"``,
      ``"enabled"``, ``"checked"``, ...).
    - ``parent``: the ref of the element containing it (None at the top).
    - ``pid``: the process that draws it, on an application element (a desktop tree's
      roots: the accessibility bus knows each application's process); None elsewhere.
      Where an action lands is checked against the X server's owner of the window
      there, never against a title.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ref: str
    role: str
    name: str = ""
    value: str | None = None
    states: frozenset[str] = frozenset()
    box: Region | None = None
    parent: str | None = None
    pid: int | None = None
    children: tuple[Element, ...] = ()

    @property
    def interactive(self) -> bool:
        """True for a role an agent acts on (a button, a field, a link, ...)."""
        return self.role in INTERACTIVE_ROLES

    @property
    def visible(self) -> bool:
        """True when it covers pixels on the screen and the source did not say it is hidden."""
        if self.box is None:
            return False
        return "invisible" not in self.states and "hidden" not in self.states

    def walk(self) -> Iterator[Element]:
        """This element and every element below it, depth first, in document order."""
        yield self
        for child in self.children:
            yield from child.walk()


class ElementTree(BaseModel):
    """One read of what is on a screen.

    ``roots`` are the top-level elements (one per application window on a desktop,
    the page's root on a page). ``reason`` says why the tree is empty, or what is
    missing from it (an app that exposes no accessibility tree); an empty tree is an
    answer, never an error. ``coordinates`` says what the boxes are measured in:
    ``"screen"`` pixels of the display, or ``"page"`` CSS pixels of a page that is not
    on a viewfinder display.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    roots: tuple[Element, ...] = ()
    reason: str = ""
    coordinates: Literal["screen", "page"] = "screen"
    read_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    def walk(self) -> Iterator[Element]:
        """Every element, depth first, in document order."""
        for root in self.roots:
            yield from root.walk()

    def find(self, ref: str) -> Element | None:
        """The element with ``ref``, or None when this read has none."""
        return next((element for element in self.walk() if element.ref == ref), None)

    def count(self) -> int:
        """How many elements this read holds."""
        return sum(1 for _ in self.walk())

    def element_at(self, x: int, y: int, within: Element | None = None) -> Element | None:
        """The element a pointer at screen point (``x``, ``y``) acts on, or None.

        The deepest visible element whose box holds the point; when it is not one an
        agent acts on (a label inside a button), the nearest interactive element above
        it that holds the point instead. Of two windows that both hold it, the later
        root wins (the one read last is usually on top): a caller that knows which
        window is in front (the X server does) passes it as ``within``, and only that
        element's subtree is searched.
        """
        tops = (within,) if within is not None else tuple(reversed(self.roots))
        best = next((hit for top in tops if (hit := _hits(top, x, y))), None)
        if best is None:
            return None
        for element in reversed(best):
            if element.interactive:
                return element
        return best[-1]

    def ancestors(self, element: Element) -> tuple[Element, ...]:
        """The elements above ``element`` (by ref), outermost first; () for a root or
        an element this read does not hold."""
        for root in self.roots:
            chain = _chain_to(root, element.ref)
            if chain:
                return chain[:-1]
        return ()

    def application(self, element: Element) -> Element:
        """The top-level element ``element`` belongs to (its application on a desktop)."""
        above = self.ancestors(element)
        return above[0] if above else element

    def window_of(self, element: Element) -> Element | None:
        """The outermost placed element holding ``element`` (its window on a desktop:
        an application has no box), or None when neither it nor any above has one."""
        return next((e for e in (*self.ancestors(element), element) if e.box is not None), None)

    def names(self, element: Element, anchor: ElementAnchor) -> bool:
        """Whether ``element`` is the one ``anchor`` recorded: the same role and name
        under the same path of roles and names."""
        path = tuple((above.role, above.name) for above in self.ancestors(element))
        return (element.role, element.name, path) == (anchor.role, anchor.name, anchor.path)

    def anchor(self, element: Element) -> ElementAnchor:
        """What a recording keeps of ``element`` to find it again in another read."""
        return ElementAnchor(
            role=element.role,
            name=element.name,
            path=tuple((above.role, above.name) for above in self.ancestors(element)),
            box=element.box,
            ref=element.ref,
        )

    def locate(self, anchor: ElementAnchor) -> list[Element]:
        """The visible elements of this read that ``anchor`` names: the same role and
        name under the same path of roles and names. More than one is ambiguous: a
        caller that acts must not pick one."""
        found = []
        for root in self.roots:
            for chain in _chains(root, ()):
                element = chain[-1]
                if (
                    element.visible
                    and element.role == anchor.role
                    and element.name == anchor.name
                    and tuple((e.role, e.name) for e in chain[:-1]) == anchor.path
                ):  # the same test as names(), without walking up again
                    found.append(element)
        return found


class ElementAnchor(BaseModel):
    """An element as a recording keeps it, to be found again on another screen.

    ``role`` and ``name`` of the element, ``path``: the (role, name) of every element
    above it, outermost (the application) first, and ``box``: where it was, in screen
    pixels. ``ref`` is the ref it had in the session that recorded it (informative
    only: refs are per session). :meth:`ElementTree.locate` finds it in a new read.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str
    name: str = ""
    path: tuple[tuple[str, str], ...] = ()
    box: Region | None = None
    ref: str | None = None

    def describe(self) -> str:
        """``push button "Save"`` (how messages name it)."""
        return f"{self.role} {self.name!r}" if self.name else self.role


def _hits(element: Element, x: int, y: int) -> tuple[Element, ...]:
    """The chain from ``element`` down to the deepest visible element holding (x, y)."""
    inside = element.box is not None and element.visible and _holds(element.box, x, y)
    for child in reversed(element.children):  # later siblings are drawn over earlier
        below = _hits(child, x, y)
        if below:
            return (element, *below) if inside else below
    return (element,) if inside else ()


def _holds(box: Region, x: int, y: int) -> bool:
    return box.x <= x < box.right and box.y <= y < box.bottom


def _chain_to(element: Element, ref: str) -> tuple[Element, ...]:
    if element.ref == ref:
        return (element,)
    for child in element.children:
        chain = _chain_to(child, ref)
        if chain:
            return (element, *chain)
    return ()


def _chains(element: Element, above: tuple[Element, ...]) -> Iterator[tuple[Element, ...]]:
    chain = (*above, element)
    yield chain
    for child in element.children:
        yield from _chains(child, chain)
