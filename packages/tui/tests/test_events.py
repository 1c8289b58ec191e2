"""The event bus: fan-out, order, draining, closing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from viewfinder.tui.events import (
    EventBus,
    EventsDropped,
    ProcessEvent,
    ProcessExited,
    ProcessOutput,
    ProcessStarted,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def test_every_subscriber_gets_every_event_in_order() -> None:
    bus = EventBus()
    first, second = bus.subscribe(), bus.subscribe()
    events: list[ProcessEvent] = [
        ProcessStarted("a", 1, "sleep", ("1",), NOW),
        ProcessOutput("a", "stdout", ("x", "y")),
        ProcessExited("a", 1, 0, NOW, False),
    ]
    for event in events:
        bus.publish(event)
    bus.close()
    assert [event async for event in first] == events
    assert [event async for event in second] == events
    assert bus.subscriber_count == 0


async def test_drain_and_wait_for() -> None:
    bus = EventBus()
    with bus.subscribe() as subscription:
        bus.publish(ProcessOutput("a", "stdout", ("1",)))
        bus.publish(ProcessOutput("a", "stderr", ("2",)))
        assert len(subscription.drain()) == 2 and subscription.drain() == []
        bus.publish(ProcessOutput("b", "stdout", ("3",)))
        bus.publish(ProcessExited("b", 2, 1, NOW, False))
        exited = await subscription.wait_for(ProcessExited, lambda e: e.exit_code == 1)
        assert exited.process_id == "b"
    assert bus.subscriber_count == 0


async def test_a_closed_subscription_ends_and_gets_nothing_more() -> None:
    bus = EventBus()
    subscription = bus.subscribe()
    subscription.close()
    bus.publish(ProcessOutput("a", "stdout", ("late",)))
    assert [event async for event in subscription] == []
    with pytest.raises(StopAsyncIteration):
        await subscription.get()


async def test_wait_for_times_out() -> None:
    bus = EventBus()
    with bus.subscribe() as subscription, pytest.raises(TimeoutError):
        await subscription.wait_for(ProcessExited, timeout=0.05)


async def test_a_subscriber_that_falls_behind_loses_the_oldest_output_and_is_told() -> None:
    bus = EventBus()
    slow = bus.subscribe(max_events=4)
    started = ProcessStarted("a", 1, "flood", (), NOW)
    bus.publish(started)
    for number in range(10):
        bus.publish(ProcessOutput("a", "stdout", (f"line {number}", "more")))
    exited = ProcessExited("a", 1, 0, NOW, False)
    bus.publish(exited)
    bus.close()
    received = [event async for event in slow]
    # the start and the exit are kept; of the output, the newest that fit
    assert received == [
        EventsDropped(events=8, lines=16),
        started,
        ProcessOutput("a", "stdout", ("line 8", "more")),
        ProcessOutput("a", "stdout", ("line 9", "more")),
        exited,
    ]
    assert (slow.dropped_events, slow.dropped_lines) == (8, 16)


def test_a_subscription_needs_room_for_two_events() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        EventBus().subscribe(max_events=1)
