"""Two ProcessManagers with different reap_orphans settings in one process."""

from __future__ import annotations

import logging
import os

import pytest

from viewfinder.tui import ProcessManager
from viewfinder.tui.process_groups import group_members, processes


def _zombies_of(groups: set[int]) -> list[int]:
    return [e.pid for e in processes() if e.pgid in groups and e.zombie and e.ppid == os.getpid()]


async def test_a_manager_that_does_not_reap_is_not_stalled_by_one_that_does(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="viewfinder.tui.processes")
    reaping = ProcessManager(kill_timeout=2.0, reap_orphans=True)
    plain = ProcessManager(kill_timeout=2.0, reap_orphans=False)
    try:
        # the reaping one makes this process a subreaper: orphans of the plain one's
        # groups are re-parented here, where only a reaper can take them
        await reaping.spawn("sleep", ["60"], process_id="a")
        groups: set[int] = set()
        for round_ in range(3):
            info = await plain.spawn("sh", ["-c", "sleep 60 & sleep 60"], process_id=f"b{round_}")
            groups.add(info.pid)
            killed = await plain.kill(info.id, timeout=2)
            assert killed.killed and not killed.running
            assert group_members(info.pid) == []
        # a shell that exits on its own and leaves its child behind
        info = await plain.spawn("sh", ["-c", "sleep 60 & echo $!"], process_id="left")
        await plain.wait("left", timeout=20)
        groups.add(info.pid)
        (orphan,) = [int(line.text) for line in plain.logs("left")]
        assert any(entry.pid == orphan and not entry.zombie for entry in processes())
        await plain.kill_all(timeout=2)
        assert [group_members(pgid) for pgid in groups] == [[]] * len(groups)
        assert _zombies_of(groups) == []
        assert "still left after SIGKILL" not in caplog.text  # never waited out its limit
        # and the reaping manager is unaffected
        assert reaping.get("a").running
        (a,) = await reaping.kill_all(timeout=2)
        assert a.killed and group_members(a.pid) == []
    finally:
        await plain.close()
        await reaping.close()
