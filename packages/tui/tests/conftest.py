"""Fixtures of the viewfinder-tui tests: a process manager that must leave nothing behind."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from viewfinder.tui import ProcessManager
from viewfinder.tui.process_groups import group_members


@pytest.fixture
async def processes() -> AsyncIterator[ProcessManager]:
    """A ProcessManager, closed after the test; asserts no member of its groups is left."""
    manager = ProcessManager(kill_timeout=2.0, reap_orphans=True)
    try:
        yield manager
    finally:
        groups = [info.pid for info in manager.list_processes()]
        await manager.close()
        leftovers = {pgid: group_members(pgid) for pgid in groups}
        assert not any(leftovers.values()), f"processes left behind: {leftovers}"
