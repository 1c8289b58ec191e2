"""Process events and the async bus that delivers them.

The manager publishes, for every process and in this order: one
:class:`ProcessStarted`, any number of :class:`ProcessOutput` (each a batch of lines read
together from one stream), and one :class:`ProcessExited` once the process ended and its
output was drained. Every subscriber gets every event, in publication order.
"""

from __future__ import annotations

import asyncio
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


ProcessEvent = ProcessStarted | ProcessOutput | ProcessExited
E = TypeVar("E", ProcessStarted, ProcessOutput, ProcessExited)

_CLOSED = object()


class EventSubscription:
    """One subscriber's queue of events; iterate it with ``async for``.

    The queue is unbounded so that no event is ever dropped or reordered; output is
    already batched per read, so even a process printing as fast as it can produces
    only a few hundred events a second. Close the subscription when done with it.
    """

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._closed = False

    def _put(self, item: object) -> None:
        self._queue.put_nowait(item)

    async def get(self) -> ProcessEvent:
        """The next event; raises ``StopAsyncIteration`` once the subscription closed."""
        item = await self._queue.get()
        if item is _CLOSED:
            self._queue.put_nowait(_CLOSED)  # later get() calls end too
            raise StopAsyncIteration
        return item  # type: ignore[return-value]

    def drain(self) -> list[ProcessEvent]:
        """Every event already queued, without waiting (for consumers that batch)."""
        items: list[ProcessEvent] = []
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is _CLOSED:
                self._queue.put_nowait(_CLOSED)
                break
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
            self._queue.put_nowait(_CLOSED)

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

    def subscribe(self) -> EventSubscription:
        """A new subscription receiving every event published from now on."""
        subscription = EventSubscription(self)
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
