"""Pings to an app (``_NET_WM_PING``): an answer is seen as soon as it is read, however
it was read: by a wait, or by a round trip made meanwhile on the same connection."""

from __future__ import annotations

import select
from typing import Any

import pytest

from viewfinder.xvfb import Display, app_pings
from viewfinder.xvfb.app_pings import AppPings


def test_an_answer_read_by_a_round_trip_during_the_wait_ends_it_at_once(
    display: Display, tk_probe: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings = AppPings(display.name)
    try:
        window = pings.window_under_pointer()  # the pointer starts over the probe
        assert window is not None
        real_select, looked = select.select, AppPings._gone
        waits_on_the_socket: list[float] = []

        def answer_then_look(self: AppPings, gone_window: int) -> bool:
            # the app's answer reaches the socket first; the look's round trip then
            # reads it off the socket into Xlib's queue, with the look's own reply
            real_select([self._conn.fileno()], [], [], 10)
            return looked(self, gone_window)

        def counted_select(*args: Any) -> Any:
            if len(args) > 3 and isinstance(args[3], float) and args[3] > 0:
                waits_on_the_socket.append(args[3])  # Xlib's own reads do not wait
            return real_select(*args)

        monkeypatch.setattr(AppPings, "_gone", answer_then_look)
        monkeypatch.setattr(app_pings.select, "select", counted_select)
        number = pings.send(window)
        assert number is not None
        assert pings.wait(number, timeout=10.0)
        # the answer was in Xlib's queue: waiting on the socket could only time out
        assert waits_on_the_socket == []
    finally:
        pings.close()
