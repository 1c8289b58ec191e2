"""DisplayPool: warm displays handed out, cleaned on release, dead ones replaced."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import Xlib.display

from viewfinder.xvfb import DisplayPool
from viewfinder.xvfb.pool import PoolClosedError, PoolExhaustedError

X_CLIENT = Path(__file__).parent / "x_client.py"


def _top_level_windows(name: str) -> list[int]:
    conn = Xlib.display.Display(name)
    try:
        return [child.id for child in conn.screen().root.query_tree().children]
    finally:
        conn.close()


@pytest.fixture
def pool():
    with DisplayPool(size=1, width=320, height=240) as opened:
        yield opened


def test_acquire_gives_a_running_display_and_refills(pool, wait_until) -> None:
    assert pool.wait_warm(timeout=30)
    display = pool.acquire(timeout=30)
    assert display.is_alive()
    assert display.size == (320, 240)
    wait_until(lambda: pool.stats().warm == 1, "the pool to start a replacement")
    stats = pool.stats()
    assert (stats.in_use, stats.size) == (1, 1)
    pool.release(display)
    stats = pool.stats()
    # the returned display is kept and handed out next; the surplus one was stopped
    assert (stats.warm, stats.in_use) == (1, 0)
    assert display.is_alive()
    with pool.display(timeout=30) as again:
        assert again is display


def test_release_kills_the_clients_with_windows(wait_until) -> None:
    with DisplayPool(size=2, width=320, height=240) as pool:
        display = pool.acquire(timeout=30)
        client = subprocess.Popen(
            [sys.executable, str(X_CLIENT), "10", "10", "50", "50"],
            env=display.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert client.stdout is not None
        window = int(client.stdout.readline())
        assert window in _top_level_windows(display.name)
        pool.release(display)
        assert client.wait(timeout=30) != 0  # its connection was closed under it
        client.stdout.close()
        assert display.is_alive()
        assert _top_level_windows(display.name) == []
        with pool.display(timeout=30) as again:
            assert again is display


def test_dead_display_is_replaced(pool, wait_until) -> None:
    display = pool.acquire(timeout=30)
    assert display.pid is not None
    os.kill(display.pid, signal.SIGKILL)
    wait_until(lambda: not display.is_alive(), "Xvfb to die")
    pool.release(display)
    assert pool.stats().replaced == 1
    fresh = pool.acquire(timeout=30)
    assert fresh.is_alive() and fresh is not display
    pool.release(fresh)


def test_acquire_times_out_when_no_display_can_start() -> None:
    # Every start fails here, so no display ever becomes free.
    with DisplayPool(size=1, extra_args=["-no-such-option"]) as broken:
        with pytest.raises(PoolExhaustedError, match="no display became free"):
            broken.acquire(timeout=1)
        assert broken.stats().started == 0


def test_a_display_released_while_its_replacement_starts_keeps_the_pool_at_its_size(
    wait_until,
) -> None:
    """The replacement that acquire() set off finishes after the display came back: one
    of the two is stopped, never both kept."""
    from viewfinder.core.testing import child_processes

    before = child_processes("Xvfb")
    with DisplayPool(size=1, width=320, height=240) as pool:
        assert pool.wait_warm(timeout=30)
        display = pool.acquire(timeout=30)
        pool.release(display)  # at once: the replacement is still starting
        wait_until(
            lambda: pool.stats().started == 2 and pool.stats().starting == 0,
            "the replacement to finish starting",
        )
        stats = pool.stats()
        assert (stats.warm, stats.in_use) == (1, 0)
        wait_until(
            lambda: len(child_processes("Xvfb") - before) == 1, "the surplus display to stop"
        )
        with pool.display(timeout=30) as again:
            assert again is display  # the returned one was kept


def test_close_stops_everything(wait_until) -> None:
    pool = DisplayPool(size=2, width=200, height=100)
    handed_out = pool.acquire(timeout=30)
    pool.wait_warm(timeout=30)
    pool.close()
    assert not handed_out.is_alive()
    assert pool.stats().warm == 0
    with pytest.raises(PoolClosedError):
        pool.acquire(timeout=1)
    pool.close()  # idempotent


def test_releasing_a_stranger_is_refused(pool) -> None:
    from viewfinder.xvfb import Display

    with pytest.raises(ValueError, match="not acquired"):
        pool.release(Display(10, 10))
