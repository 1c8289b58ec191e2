"""Process events and the async bus that delivers them.

The manager publishes, for every process and in this order: one
:class:`ProcessStarted`, any number of :class:`ProcessOutput` (each a batch of lines read
together from one stream), and one :class:`ProcessExited` once the process ended and its
output was drained. Every subscriber gets every event, in publication order, unless it
falls behind: a subscription holds at most ``max_events`` events, and a subscriber that
lets more pile up loses the oldest output batches (never a start or an exit) and is told
so by an :class:`EventsDropped` event.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeVar

Stream = Literal["stdout", "stderr"]


@dataclass(frozen=True, slots=True)
class ProcessStarted:
    """A process was spawned."""

    process_id: str
    pid: int
    command: str
    args: tuple[str, ...]
    at: datetime


@dataclass(frozen=True, slots=True)
class ProcessOutput:
    """Lines a process wrote, batched: everything read from ``stream`` in one go."""

    process_id: str
    stream: Stream
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ProcessExited:
    """A process ended; ``exit_code`` is negative (-signal) when a signal ended it."""

    process_id: str
    pid: int
    exit_code: int
    at: datetime
    killed: bool


@dataclass(frozen=True, slots=True)
class EventsDropped:
    """The subscriber fell behind: ``events`` output batches (``lines`` lines) were dropped.

    It is the next event the subscriber reads after the drop; the lines are still in
    each process's buffer (:meth:`ProcessManager.logs`).
    """

    events: int
    lines: int


ProcessEvent = ProcessStarted | ProcessOutput | ProcessExited | EventsDropped
E = TypeVar("E", ProcessStarted, ProcessOutput, ProcessExited, EventsDropped)

_CLOSED = object()
#: Events a subscription holds before it drops the oldest output batches.
DEFAULT_MAX_EVENTS = 1_000


class EventSubscription:
    """One subscriber's queue of events; iterate it with ``async for``.

    The queue holds at most ``max_events`` events, so a subscriber that stops reading
    cannot grow memory without bound. When it is full, the oldest :class:`ProcessOutput`
    goes (starts and exits are kept), :attr:`dropped_events` and :attr:`dropped_lines`
    count what went, and the subscriber gets one :class:`EventsDropped` before the
    events that follow. Close the subscription when done with it.
    """

    def __init__(self, bus: EventBus, max_events: int = DEFAULT_MAX_EVENTS) -> None:
        if max_events < 2:
            raise ValueError(f"max_events must be at least 2, not {max_events}")
        self._bus = bus
        self.max_events = max_events
        self._items: deque[object] = deque()
        self._ready = asyncio.Event()
        self._closed = False
        #: Output batches and lines dropped so far, in all.
        self.dropped_events = 0
        self.dropped_lines = 0
        self._unreported: tuple[int, int] = (0, 0)

    def _put(self, item: object) -> None:
        if len(self._items) >= self.max_events and item is not _CLOSED:
            self._drop_oldest_output()
        self._items.append(item)
        self._ready.set()

    def _drop_oldest_output(self) -> None:
        items = self._items
        for index, event in enumerate(items):
            if isinstance(event, ProcessOutput):
                del items[index]
                break
        else:  # nothing but starts and exits: the oldest of those
            event = items.popleft()
        lines = len(event.lines) if isinstance(event, ProcessOutput) else 0
        self.dropped_events += 1
        self.dropped_lines += lines
        events, dropped_lines = self._unreported
        self._unreported = (events + 1, dropped_lines + lines)

    def _next(self) -> object | None:
        """The next item without waiting: a drop report first, None when empty."""
        if self._unreported != (0, 0):
            events, lines = self._unreported
            self._unreported = (0, 0)
            return EventsDropped(events, lines)
        if not self._items:
            return None
        item = self._items.popleft()
        if item is _CLOSED:
            self._items.appendleft(_CLOSED)  # later calls end too
        return item

    async def get(self) -> ProcessEvent:
        """The next event; raises ``StopAsyncIteration`` once the subscription closed."""
        while True:
            item = self._next()
            if item is _CLOSED:
                raise StopAsyncIteration
            if item is not None:
                return item  # type: ignore[return-value]
            self._ready.clear()
            await self._ready.wait()

    def drain(self) -> list[ProcessEvent]:
        """Every event already queued, without waiting (for consumers that batch)."""
        items: list[ProcessEvent] = []
        while (item := self._next()) is not None and item is not _CLOSED:
            items.append(item)  # type: ignore[arg-type]
        return items

    async def wait_for(
        self, kind: type[E], predicate: Callable[[E], bool] | None = None, timeout: float = 10.0
    ) -> E:
        """Skip events until one of ``kind`` matching ``predicate`` arrives; return it."""
        async with asyncio.timeout(timeout):
            async for event in self:
                if isinstance(event, kind) and (predicate is None or predicate(event)):
                    return event
        raise LookupError(f"the event bus closed before a matching {kind.__name__} arrived")

    def close(self) -> None:
        """Stop receiving events; an ``async for`` over it ends after what is queued."""
        if not self._closed:
            self._closed = True
            self._bus._unsubscribe(self)
            self._put(_CLOSED)

    def __aiter__(self) -> AsyncIterator[ProcessEvent]:
        return self

    async def __anext__(self) -> ProcessEvent:
        return await self.get()

    def __enter__(self) -> EventSubscription:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class EventBus:
    """Fan-out of process events to subscribers, on the event loop of the manager."""

    def __init__(self) -> None:
        self._subscriptions: list[EventSubscription] = []

    def subscribe(self, max_events: int = DEFAULT_MAX_EVENTS) -> EventSubscription:
        """A new subscription receiving every event published from now on."""
        subscription = EventSubscription(self, max_events)
        self._subscriptions.append(subscription)
        return subscription

    def publish(self, event: ProcessEvent) -> None:
        """Queue ``event`` for every subscriber (never blocks)."""
        for subscription in self._subscriptions:
            subscription._put(event)

    def close(self) -> None:
        """End every subscription."""
        for subscription in list(self._subscriptions):
            subscription.close()

    def _unsubscribe(self, subscription: EventSubscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscriptions)
