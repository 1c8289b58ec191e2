"""Reading AT-SPI2 accessibility trees over D-Bus (no GObject).

The registry on the accessibility bus lists the applications; each application answers
for its own objects (``org.a11y.atspi.Accessible``: role, name, state, children;
``org.a11y.atspi.Component``: extents on the screen; ``Text`` and ``Value`` for what a
field holds). :class:`AtspiReader` walks the tree one level at a time and sends every
question of a level in one write before reading any answer, so a level costs one round
trip per application, not one per question (the messages are packed and unpacked by
:mod:`viewfinder.xvfb.atspi_wire`). Every read has a deadline.

What shows is read first: the children of an object that is not ``showing`` (a page
of a notebook behind another, rows scrolled away) wait until everything showing has
been read, so a read that reaches its ceiling leaves out what is not on the screen.
AT-SPI has no "disabled" state: an interactive element that is neither ``sensitive``
nor ``enabled`` gets ``disabled`` here, so a snapshot says so and an action refuses it.
"""

from __future__ import annotations

import select
import struct
import time
from dataclasses import dataclass, field
from typing import Any, NoReturn

from jeepney.io.blocking import DBusConnection, open_dbus_connection

from viewfinder.core.element import INTERACTIVE_ROLES
from viewfinder.core.element_sources import ElementNode, ElementSourceError
from viewfinder.core.geometry import Region
from viewfinder.xvfb import atspi_wire

ACCESSIBLE = "org.a11y.atspi.Accessible"
COMPONENT = "org.a11y.atspi.Component"
TEXT = "org.a11y.atspi.Text"
VALUE = "org.a11y.atspi.Value"
PROPERTIES = "org.freedesktop.DBus.Properties"
REGISTRY = ("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
BUS_DAEMON = ("org.freedesktop.DBus", "/org/freedesktop/DBus")
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
#: The states that say an element can be used now (AT-SPI names no "disabled").
_USABLE = frozenset({"sensitive", "enabled"})
#: One question: (bus name, object path), interface, method or property, signature, body.
Question = tuple[tuple[str, str], str, str, str | None, tuple[Any, ...]]
#: One call on the wire: destination, path, interface, member, signature, body.
Call = tuple[str, str, str, str, str, bytes]


class AtspiTimeoutError(ElementSourceError, TimeoutError):
    """The tree was not read within the deadline (an app that stopped answering)."""


@dataclass
class _Object:
    """One accessible while it is being read: its address and what came back."""

    bus_name: str
    path: str
    depth: int = 0
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
    #: how many elements a read may ask about before it keeps ``max_elements`` of them
    max_read: int = 5000


def states_of(bits: list[int]) -> frozenset[str]:
    """The state names of AT-SPI's state set (two 32-bit words)."""
    names = set()
    for word_index, word in enumerate(bits[:2]):
        for bit in range(32):
            index = word_index * 32 + bit
            if word & (1 << bit) and index < len(_STATE_NAMES):
                names.add(_STATE_NAMES[index])
    return frozenset(names)


def with_disabled(role: str, states: frozenset[str]) -> frozenset[str]:
    """``states`` plus ``disabled`` for an interactive ``role`` that is neither
    ``sensitive`` nor ``enabled`` (a greyed-out button); a label is never disabled."""
    if role in INTERACTIVE_ROLES and not states & _USABLE:
        return states | {"disabled"}
    return states


def box_of(extents: tuple[int, int, int, int], screen: tuple[int, int]) -> Region | None:
    """The part of ``(x, y, width, height)`` on a ``screen``-sized screen, or None."""
    x, y, width, height = extents
    left, top = max(x, 0), max(y, 0)
    right, bottom = min(x + width, screen[0]), min(y + height, screen[1])
    if right <= left or bottom <= top:
        return None
    return Region(x=left, y=top, width=right - left, height=bottom - top)


class AtspiReader:
    """A connection to one accessibility bus, and reads of its applications' trees.

    After a :meth:`read`, ``unread`` counts the children it did not ask about (the read
    reached ``max_read`` or ``max_depth``), for the read's reason.
    """

    def __init__(self, address: str, screen: tuple[int, int], limits: ReadLimits) -> None:
        self.address = address
        self.screen = screen
        self.limits = limits
        self._connection: DBusConnection = open_dbus_connection(bus=address)
        # from here on the socket is read and written directly (see atspi_wire); what
        # jeepney already received (the NameAcquired signal) is taken over
        pipe = self._connection.parser.buf
        self._buffer = bytearray(pipe.read(pipe.bytes_buffered) if pipe.bytes_buffered else b"")
        self._deadline = 0.0
        self._count = 0
        self._seen: set[tuple[str, str]] = set()
        self.unread = 0

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
        replies = self._ask([_pid_question(name) for name in names])
        return {name: int(reply[0]) for name, reply in zip(names, replies, strict=True) if reply}

    def read(self, applications: list[tuple[str, str]]) -> list[ElementNode]:
        """Each application's tree, level by level, what shows first, within the read's
        limits; each application node carries its process id."""
        self._deadline = time.monotonic() + self.limits.timeout
        self.unread = 0
        roots = [_Object(name, path) for name, path in applications]
        # an object reached twice is listed once, where it is reached first: a GTK
        # combo box's open menu is its child and a child of its popup window (the
        # window it shows in, nearer the top), and a cycle ends there
        self._seen = {(root.bus_name, root.path) for root in roots}
        names = sorted({root.bus_name for root in roots})
        level, waiting, holders = roots, list[_Object](), list[_Object]()
        self._count = 0
        # each level's questions go with the values of the level before (whose
        # interfaces say which hold text or a value) and, first, the apps' pids
        extra = [_pid_question(name) for name in names]
        while level:
            answers = self._describe(level, holders, extra)
            if extra:
                pids = {n: int(a[0]) for n, a in zip(names, answers, strict=True) if a}
                for root in roots:
                    root.node.pid = pids.get(root.bus_name)
                extra = []
            holders = [
                item for item in level if TEXT in item.interfaces or VALUE in item.interfaces
            ]
            # the children of what is not showing wait for everything that shows
            shown: list[_Object] = []
            for item in level:
                showing = item.depth == 0 or "showing" in item.node.states
                (shown if showing else waiting).append(item)
            level = self._children(shown)
            if not level and waiting:
                level, waiting = self._children(waiting), []
        self._describe([], holders, [])
        for item in waiting:  # left waiting: the read reached its ceiling
            self.unread += len(item.children)
        return [root.node for root in roots]

    def _children(self, parents: list[_Object]) -> list[_Object]:
        """The next objects to ask about: the children of ``parents``, within the limits."""
        following = []
        for parent in parents:
            if parent.depth + 1 >= self.limits.max_depth:
                self.unread += len(parent.children)
                continue
            for bus_name, path in parent.children:
                if (bus_name, path) in self._seen:
                    continue
                if self._count >= self.limits.max_read:
                    self.unread += 1
                    continue
                child = _Object(bus_name, path, parent.depth + 1)
                parent.node.children.append(child.node)
                following.append(child)
                self._seen.add((bus_name, path))
                self._count += 1
        return following

    def _describe(
        self, level: list[_Object], holders: list[_Object], extra: list[Question]
    ) -> list[Any]:
        """Ask about ``level``, the values of ``holders`` and ``extra``, in one
        exchange; returns the answers to ``extra``."""
        questions: list[Question] = []
        for item in level:
            address = (item.bus_name, item.path)
            questions += [
                (address, ACCESSIBLE, "GetRoleName", None, ()),
                (address, PROPERTIES, "Get", "ss", (ACCESSIBLE, "Name")),
                (address, ACCESSIBLE, "GetState", None, ()),
                (address, ACCESSIBLE, "GetChildren", None, ()),
                (address, ACCESSIBLE, "GetInterfaces", None, ()),
            ]
            # an application object has no place on the screen (asking makes GTK complain)
            if item.depth > 0:
                questions.append((address, COMPONENT, "GetExtents", "u", (_SCREEN_COORDINATES,)))
        for item in holders:
            address = (item.bus_name, item.path)
            if TEXT in item.interfaces:
                questions.append((address, TEXT, "GetText", "ii", (0, -1)))
            else:
                questions.append((address, PROPERTIES, "Get", "ss", (VALUE, "CurrentValue")))
        answers = iter(self._ask(questions + extra))
        for item in level:
            role, name, state, children, interfaces = (next(answers) for _ in range(5))
            extents = next(answers) if item.depth > 0 else None
            item.node.role = str(role[0]) if role else "unknown"
            item.node.name = str(name[0]) if name else ""
            states = states_of(list(state[0])) if state else frozenset()
            item.node.states = with_disabled(item.node.role, states)
            item.children = [(str(b), str(p)) for b, p in children[0]] if children else []
            item.interfaces = tuple(interfaces[0]) if interfaces else ()
            item.node.box = box_of(tuple(extents[0]), self.screen) if extents else None
        for item in holders:
            answer = next(answers)
            if answer:
                item.node.value = str(answer[0])
        return list(answers)

    def _ask(self, questions: list[Question]) -> list[Any]:
        calls: list[Call] = []
        for (bus_name, path), interface, method, signature, body in questions:
            packed = _body(signature or "", body)
            calls.append((bus_name, path, interface, method, signature or "", packed))
        return self._exchange(calls)

    def _exchange(self, calls: list[Call]) -> list[Any]:
        """Send every call in one write, then collect the replies (each a tuple of
        the reply's values); an error reply is None."""
        if not calls:
            return []
        pending: dict[int, int] = {}
        out = bytearray()
        for index, call in enumerate(calls):
            serial = next(self._connection.outgoing_serial)
            out += atspi_wire.method_call(serial, *call)
            pending[serial] = index
        sock = self._connection.sock
        sock.settimeout(max(self._deadline - time.monotonic(), 0.001))
        try:
            sock.sendall(out)
        except TimeoutError:
            self._timed_out()
        answers: list[Any] = [None] * len(calls)
        while pending:
            for serial, returned, body in self._replies():
                index = pending.pop(serial, -1)
                if index >= 0 and returned:
                    answers[index] = body
        return answers

    def _replies(self) -> list[tuple[int, bool, Any]]:
        """The replies in the buffer, after waiting for at least one more chunk."""
        sock = self._connection.sock
        remaining = self._deadline - time.monotonic()
        if remaining <= 0 or not select.select([sock], [], [], remaining)[0]:
            self._timed_out()
        chunk = sock.recv(1 << 18)
        if not chunk:
            raise ElementSourceError("the accessibility bus closed the connection; read again")
        self._buffer += chunk
        found, start = [], 0
        while (size := atspi_wire.message_size(self._buffer, start)) is not None:
            if len(self._buffer) - start < size:
                break
            answer = atspi_wire.reply(self._buffer, start, size)
            if answer is not None:
                found.append(answer)
            start += size
        del self._buffer[:start]
        return found

    def _timed_out(self) -> NoReturn:
        raise AtspiTimeoutError(
            f"the accessibility tree was not read within {self.limits.timeout:g}s "
            "(an application stopped answering); pass a longer timeout"
        )


def _pid_question(bus_name: str) -> Question:
    return (BUS_DAEMON, "org.freedesktop.DBus", "GetConnectionUnixProcessID", "s", (bus_name,))


def _body(signature: str, values: tuple[Any, ...]) -> bytes:
    """The body of a call: strings, or 32-bit integers (what the reader asks with)."""
    if not signature:
        return b""
    if set(signature) == {"s"}:
        return atspi_wire.strings_body(*values)
    return struct.pack("<" + signature.replace("u", "I"), *values)
