"""The element facade: find element sources through plugins and read a tree with one.

Sources register through the ``viewfinder_register_element_sources`` hook
(``register(name, factory)``), the way capture backends do; ``factory(**options)``
returns an :class:`ElementSource`. :func:`elements` reads one tree with a one-off
source; keep a source from :func:`get_element_source` to read again with refs that
stay the same for the same elements::

    with get_element_source("atspi", display=":7") as source:
        first = source.read()
        again = source.read()      # the 'Save' button has the same ref in both
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, cast

from viewfinder.core.backend import Availability
from viewfinder.core.capture import BackendSpec, registered_specs
from viewfinder.core.element import Element, ElementTree
from viewfinder.core.errors import ViewfinderError
from viewfinder.core.geometry import Region
from viewfinder.core.plain_text import neutralised

log = logging.getLogger(__name__)

HOOK = "viewfinder_register_element_sources"
#: Names the source :func:`elements` uses when none is given.
SOURCE_ENV = "VIEWFINDER_ELEMENT_SOURCE"


class ElementSourceError(ViewfinderError):
    """An element source could not be found, made or read."""


class UnknownElementSourceError(ElementSourceError, LookupError):
    """An element source was asked for by a name no plugin registered."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        super().__init__(
            f"unknown element source {name!r}; registered sources: "
            f"{', '.join(sorted(available)) or 'none'} (install viewfinder-xvfb for "
            "'atspi', viewfinder-cdp for 'cdp')"
        )


@dataclass
class ElementNode:
    """One element as a source reads it, before it gets its ref.

    ``key`` is the toolkit's own identity of the element, when it has one (an AT-SPI
    object's bus name and object path; a page node's backend node id): the ref is
    bound to it, so neither an insert, a reorder nor a rename moves a ref.
    """

    role: str
    name: str = ""
    value: str | None = None
    states: frozenset[str] = frozenset()
    box: Region | None = None
    children: list[ElementNode] = field(default_factory=list)
    #: the process behind an application node (see :attr:`Element.pid`)
    pid: int | None = None
    key: str | None = None


@dataclass
class ElementRead:
    """What :meth:`ElementSource._read` returns: the top-level nodes, and why there are
    none (or what is missing), and what the boxes are measured in."""

    roots: list[ElementNode]
    reason: str = ""
    coordinates: Literal["screen", "page"] = "screen"


#: The longest role, name and value an element keeps (characters): an application's
#: strings are bounded before they reach a model, a terminal or a recording.
MAX_ROLE_CHARS = 64
MAX_NAME_CHARS = 1000
MAX_VALUE_CHARS = 4000

#: What a ref is bound to: a node's own key, or (for a source that has none) its path
#: of (role, name, index among its siblings of that role and name) from the root.
RefKey = tuple[str, str] | tuple[tuple[str, str, int], ...]


_paused = 0  # blocks in progress, in any thread
_enable_after = False  # whether the collector was on when the first of them began
_paused_lock = threading.Lock()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the block (on again when the last block of any
    thread ends). A read makes tens of thousands of objects and no cycles; the
    collector, triggered by their count, walked every live object again and again: a
    third of a 5,000-element page's read. What the block leaves is collected after."""
    global _paused, _enable_after
    with _paused_lock:
        if _paused == 0:
            _enable_after = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused -= 1
            if _paused == 0 and _enable_after:
                gc.enable()


class RefTable:
    """Refs ``e1``, ``e2``, ... handed out once per element, for one session.

    An element with a ``key`` (the toolkit's identity of it) keeps its ref for as long
    as the toolkit keeps that identity: moved, resized, renamed, its siblings inserted
    or reordered. A ref whose key is in no later read names an element that is gone.
    Elements without a key fall back to their path of (role, name, index among their
    siblings of that role and name): a sibling added elsewhere leaves the ref as it
    was; a renamed element is a new element.
    """

    def __init__(self) -> None:
        self._refs: dict[RefKey, str] = {}
        self._roles: dict[str, str] = {}  # each role as neutralised() shows it

    def ref_for(self, key: RefKey) -> str:
        ref = self._refs.get(key)
        if ref is None:
            ref = self._refs[key] = f"e{len(self._refs) + 1}"
        return ref

    def build(self, nodes: Sequence[ElementNode]) -> tuple[Element, ...]:
        """The elements of ``nodes``, each with its ref; roles, names and values
        neutralised and bounded (:func:`~viewfinder.core.plain_text.neutralised`)."""
        return self._build(nodes, (), None)

    def _build(
        self,
        nodes: Sequence[ElementNode],
        above: tuple[tuple[str, str, int], ...],
        parent: str | None,
    ) -> tuple[Element, ...]:
        seen: dict[tuple[str, str], int] = {}
        built = []
        refs, roles = self._refs, self._roles
        for node in nodes:
            role, name = node.role, node.name
            index = seen[(role, name)] = seen.get((role, name), -1) + 1
            path = (*above, (role, name, index))
            key: RefKey = ("key", node.key) if node.key is not None else path
            ref = refs.get(key)
            if ref is None:
                ref = refs[key] = f"e{len(refs) + 1}"
            shown_role = roles.get(role)
            if shown_role is None:  # a source names a few roles, over and over
                shown_role = roles[role] = neutralised(role, MAX_ROLE_CHARS)
            built.append(
                Element(
                    ref=ref,
                    role=shown_role,
                    name=neutralised(name, MAX_NAME_CHARS) if name else "",
                    value=None if node.value is None else neutralised(node.value, MAX_VALUE_CHARS),
                    states=node.states,
                    box=node.box,
                    parent=parent,
                    pid=node.pid,
                    children=self._build(node.children, path, ref) if node.children else (),
                )
            )
        return tuple(built)


class ElementSource(ABC):
    """Base class of element sources: subclasses implement :meth:`_read`.

    :meth:`read` turns what :meth:`_read` found into an :class:`ElementTree` whose refs
    stay the same across reads of this source (see :class:`RefTable`).
    """

    #: Name under which the source is registered.
    name: ClassVar[str] = "unnamed"
    #: Order when picking the best available source (higher first; < 0: never picked).
    priority: ClassVar[int] = 0
    #: Whether :meth:`read` clips the boxes :meth:`_read` reports to the elements above
    #: them and drops those not ``showing`` (:mod:`viewfinder.core.element_clipping`):
    #: for a source whose toolkit reports whole extents (AT-SPI).
    clips_boxes: ClassVar[bool] = False

    def __init__(self) -> None:
        self._refs = RefTable()

    @classmethod
    def availability(cls, **options: Any) -> Availability:
        """Whether this source, made with ``options``, can read here; why not if not."""
        return Availability.yes()

    def read(self) -> ElementTree:
        """What is on the screen now, as a tree of elements with session-stable refs."""
        with collector_paused():
            found = self._read()
            if self.clips_boxes:
                from viewfinder.core.element_clipping import clip_boxes

                clip_boxes(found.roots)
            return ElementTree(
                source=self.name,
                roots=self._refs.build(found.roots),
                reason=found.reason,
                coordinates=found.coordinates,
            )

    @abstractmethod
    def _read(self) -> ElementRead:
        """Read the tree. An app that exposes nothing is an empty read with a reason."""

    def close(self) -> None:
        """Release what the source holds (bus connections, browsers)."""

    def __enter__(self) -> ElementSource:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


SourceFactory = Callable[..., ElementSource]


class ElementSourceSpec(BackendSpec):
    """A registered element source: its name, factory (or its import path) and plugin.

    Options, priority and availability are read from the factory as for a capture
    backend (:class:`~viewfinder.core.BackendSpec`).
    """

    kind = "element source"
    product = ElementSource
    product_hint = "subclass viewfinder.core.element_sources.ElementSource and implement _read()"

    def takes(self, options: dict[str, Any]) -> bool:
        accepted, takes_any = self.options()
        return takes_any or not set(options) - set(accepted)

    def create(self, **options: Any) -> ElementSource:
        """A source made by the factory, checked to be an :class:`ElementSource`."""
        return cast(ElementSource, super().create(**options))


def element_sources() -> dict[str, ElementSourceSpec]:
    """Every registered element source by name, asking the plugins afresh."""
    return registered_specs(HOOK, "element source", ElementSourceSpec)


def resolve_element_source(name: str | None = None, **options: Any) -> ElementSourceSpec:
    """The spec for ``name``, else ``$VIEWFINDER_ELEMENT_SOURCE``, else the best one
    that takes ``options`` and says it can read with them (``url=`` picks a page's
    source, ``display=`` a desktop's)."""
    specs = element_sources()
    chosen = name or os.environ.get(SOURCE_ENV) or None
    if chosen is not None:
        if chosen not in specs:
            raise UnknownElementSourceError(chosen, list(specs))
        return specs[chosen]
    reasons = []
    for spec in sorted(specs.values(), key=lambda s: -s.priority):
        if spec.priority < 0 or not spec.takes(options):
            continue
        availability = spec.availability(**options)
        if availability:
            return spec
        reasons.append(f"{spec.name}: {availability.reason}")
    raise ElementSourceError(
        f"no element source can read here ({'; '.join(reasons) or 'none is installed'}). "
        "Name an X display (display=':N', `--display :N`) or a page (url=..., `--url`)."
    )


def get_element_source(name: str | None = None, **options: Any) -> ElementSource:
    """Make an element source (see :func:`resolve_element_source`) with ``options``;
    refused with the source's reason when it cannot read with them."""
    spec = resolve_element_source(name, **options)
    availability = spec.availability(**options)
    if not availability:
        raise ElementSourceError(f"element source {spec.name!r} cannot read: {availability.reason}")
    return spec.create(**options)


def elements(source: str | None = None, **options: Any) -> ElementTree:
    """Read the elements on a screen once with a one-off source.

    ``source`` picks by name (``"atspi"``, ``"cdp"``); without it
    ``$VIEWFINDER_ELEMENT_SOURCE`` or the best available source for ``options``
    (``display=":7"``, ``url="http://..."``, ``cdp_url=...``) is used.
    """
    with get_element_source(source, **options) as instance:
        return instance.read()
