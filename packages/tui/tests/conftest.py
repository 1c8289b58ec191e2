"""Fixtures of the viewfinder-tui tests: a process manager that must leave nothing behind,
and a configuration folder of their own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

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


@pytest.fixture(autouse=True)
def config_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$XDG_CONFIG_HOME`` in a new temporary folder, for every test.

    ``run_tui`` reads the configuration and keeps the command history there; no test
    may read or write the real user's.
    """
    home = tmp_path_factory.mktemp("config-home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home
