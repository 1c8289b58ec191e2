"""Reading AT-SPI2 accessibility trees over D-Bus (jeepney, no GObject).

The registry on the accessibility bus lists the applications; each application answers
for its own objects (``org.a11y.atspi.Accessible``: role, name, state, children;
``org.a11y.atspi.Component``: extents on the screen; ``Text`` and ``Value`` for what a
field holds). :class:`AtspiReader` walks the tree one level at a time and sends every
question of a level before reading any answer, so a level costs one round trip per
application, not one per question. Every read has a deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jeepney import DBusAddress, MessageType, Properties, new_method_call
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import DBusConnection, open_dbus_connection
from jeepney.low_level import HeaderFields, Message

from viewfinder.core.element_sources import ElementNode, ElementSourceError
from viewfinder.core.geometry import Region

ACCESSIBLE = "org.a11y.atspi.Accessible"
COMPONENT = "org.a11y.atspi.Component"
TEXT = "org.a11y.atspi.Text"
VALUE = "org.a11y.atspi.Value"
REGISTRY = ("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
#: AT-SPI's state bits (atspi-constants.h), in order.
_STATE_NAMES = [
    "invalid", "active", "armed", "busy", "checked", "collapsed", "defunct", "editable",
    "enabled", "expandable", "expanded", "focusable", "focused", "has tooltip",
    "horizontal", "iconified", "modal", "multi line", "multiselectable", "opaque",
    "pressed", "resizable", "selectable", "selected", "sensitive", "showing",
    "single line", "stale", "transient", "vertical", "visible", "manages descendants",
    "indeterminate", "required", "truncated", "animated", "invalid entry",
    "supports autocompletion", "selectable text", "is default", "visited", "checkable",
    "has popup", "read only",
]  # fmt: skip
_SCREEN_COORDINATES = 0
#: One question: (bus name, object path), interface, method or property, signature, body.
Question = tuple[tuple[str, str], str, str, str | None, tuple[Any, ...]]


class AtspiTimeoutError(ElementSourceError, TimeoutError):
    """The tree was not read within the deadline (an app that stopped answering)."""


@dataclass
class _Object:
    """One accessible while it is being read: its address and what came back."""

    bus_name: str
    path: str
    node: ElementNode = field(default_factory=lambda: ElementNode(role=""))

    def __post_init__(self) -> None:
        # the object's own identity on the bus: its ref follows it, not its place
        self.node.key = f"{self.bus_name}{self.path}"

    children: list[tuple[str, str]] = field(default_factory=list)
    interfaces: tuple[str, ...] = ()


@dataclass
class ReadLimits:
    """How much one read may cost: elements, depth, seconds."""

    max_elements: int = 5000
    max_depth: int = 64
    timeout: float = 5.0


def states_of(bits: list[int]) -> frozenset[str]:
    """The state names of AT-SPI's state set (two 32-bit words)."""
    names = set()
    for word_index, word in enumerate(bits[:2]):
        for bit in range(32):
            index = word_index * 32 + bit
            if word & (1 << bit) and index < len(_STATE_NAMES):
                names.add(_STATE_NAMES[index])
    return frozenset(names)


def box_of(extents: tuple[int, int, int, int], screen: tuple[int, int]) -> Region | None:
    """The part of ``(x, y, width, height)`` on a ``screen``-sized screen, or None."""
    x, y, width, height = extents
    left, top = max(x, 0), max(y, 0)
    right, bottom = min(x + width, screen[0]), min(y + height, screen[1])
    if right <= left or bottom <= top:
        return None
    return Region(x=left, y=top, width=right - left, height=bottom - top)


class AtspiReader:
    """A connection to one accessibility bus, and reads of its applications' trees."""

    def __init__(self, address: str, screen: tuple[int, int], limits: ReadLimits) -> None:
        self.screen = screen
        self.limits = limits
        self._connection: DBusConnection = open_dbus_connection(bus=address)
        self._deadline = 0.0

    def close(self) -> None:
        self._connection.close()

    def applications(self) -> list[tuple[str, str]]:
        """The (bus name, object path) of every application registered on the bus."""
        self._deadline = time.monotonic() + self.limits.timeout
        reply = self._ask([(REGISTRY, ACCESSIBLE, "GetChildren", None, ())])[0]
        return [(str(name), str(path)) for name, path in (reply or [[]])[0]]

    def process_ids(self, bus_names: list[str]) -> dict[str, int]:
        """The pid of the process behind each of ``bus_names`` (the bus daemon knows it
        from the socket: an application cannot claim another's), in one round trip."""
        names = sorted(set(bus_names))
        replies = self._exchange([message_bus.GetConnectionUnixProcessID(n) for n in names])
        return {name: int(reply[0]) for name, reply in zip(names, replies, strict=True) if reply}

    def read(self, applications: list[tuple[str, str]]) -> list[ElementNode]:
        """Each application's tree, level by level, within the read's limits; each
        application node carries its process id."""
        self._deadline = time.monotonic() + self.limits.timeout
        roots = [_Object(name, path) for name, path in applications]
        pids = self.process_ids([root.bus_name for root in roots])
        for root in roots:
            root.node.pid = pids.get(root.bus_name)
        level, count = roots, 0
        for depth in range(self.limits.max_depth):
            if not level:
                break
            self._describe(level, placed=depth > 0)
            following: list[_Object] = []
            for parent in level:
                for bus_name, path in parent.children:
                    if count >= self.limits.max_elements:
                        break
                    child = _Object(bus_name, path)
                    parent.node.children.append(child.node)
                    following.append(child)
                    count += 1
            level = following
        return [root.node for root in roots]

    def _describe(self, level: list[_Object], *, placed: bool) -> None:
        # an application object has no place on the screen (asking makes GTK complain)
        questions: list[Question] = []
        for item in level:
            address = (item.bus_name, item.path)
            questions += [
                (address, ACCESSIBLE, "GetRoleName", None, ()),
                (address, "Properties", "Name", None, ()),
                (address, ACCESSIBLE, "GetState", None, ()),
                (address, ACCESSIBLE, "GetChildren", None, ()),
                (address, ACCESSIBLE, "GetInterfaces", None, ()),
            ]
            if placed:
                questions.append((address, COMPONENT, "GetExtents", "u", (_SCREEN_COORDINATES,)))
        answers = iter(self._ask(questions))
        for item in level:
            role, name, state, children, interfaces = (next(answers) for _ in range(5))
            extents = next(answers) if placed else None
            item.node.role = str(role[0]) if role else "unknown"
            item.node.name = str(name[0][1]) if name else ""
            item.node.states = states_of(list(state[0])) if state else frozenset()
            item.children = [(str(b), str(p)) for b, p in children[0]] if children else []
            item.interfaces = tuple(interfaces[0]) if interfaces else ()
            item.node.box = box_of(tuple(extents[0]), self.screen) if extents else None
        self._read_values(
            [item for item in level if TEXT in item.interfaces or VALUE in item.interfaces]
        )

    def _read_values(self, holders: list[_Object]) -> None:
        questions: list[Question] = []
        for item in holders:
            address = (item.bus_name, item.path)
            if TEXT in item.interfaces:
                questions.append((address, TEXT, "GetText", "ii", (0, -1)))
            else:
                questions.append((address, VALUE, "CurrentValue", None, ()))
        for item, answer in zip(holders, self._ask(questions), strict=True):
            if answer and TEXT in item.interfaces:
                item.node.value = str(answer[0])
            elif answer:
                item.node.value = str(answer[0][1])

    def _ask(self, questions: list[Question]) -> list[Any]:
        messages = []
        for (bus_name, path), interface, method, signature, body in questions:
            if interface == "Properties":  # a property of the Accessible
                address = DBusAddress(path, bus_name=bus_name, interface=ACCESSIBLE)
                messages.append(Properties(address).get(method))
            elif interface == VALUE:
                address = DBusAddress(path, bus_name=bus_name, interface=VALUE)
                messages.append(Properties(address).get(method))
            else:
                address = DBusAddress(path, bus_name=bus_name, interface=interface)
                messages.append(new_method_call(address, method, signature, body))
        return self._exchange(messages)

    def _exchange(self, messages: list[Message]) -> list[Any]:
        """Send every message, then collect the replies; an error reply is None."""
        if not messages:
            return []
        pending: dict[int, int] = {}
        for index, message in enumerate(messages):
            serial = next(self._connection.outgoing_serial)
            self._connection.send(message, serial=serial)
            pending[serial] = index
        answers: list[Any] = [None] * len(messages)
        for reply in self._replies(len(pending)):
            index = pending.pop(reply.header.fields.get(HeaderFields.reply_serial, -1), -1)
            if index >= 0 and reply.header.message_type == MessageType.method_return:
                answers[index] = reply.body
            if not pending:
                break
        return answers

    def _replies(self, expected: int) -> Iterator[Message]:
        for _ in range(expected * 4 + 16):  # signals may come between the replies
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise AtspiTimeoutError(
                    f"the accessibility tree was not read within {self.limits.timeout:g}s "
                    "(an application stopped answering); pass a longer timeout"
                )
            try:
                yield self._connection.receive(timeout=remaining)
            except TimeoutError:
                continue
