"""ProcessManager with real processes: output, events, kills, children, leaks, bad input."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from viewfinder.core import ViewfinderError
from viewfinder.core.testing import running
from viewfinder.tui import (
    CommandNotFoundError,
    DuplicateProcessError,
    EventsDropped,
    ProcessExited,
    ProcessManager,
    ProcessOutput,
    ProcessStarted,
    SpawnError,
    UnknownProcessError,
)
from viewfinder.tui.process_groups import group_members
from viewfinder.tui.process_groups import processes as all_processes

PY = sys.executable


def python(code: str) -> list[str]:
    return ["-u", "-c", textwrap.dedent(code)]


async def output_lines(processes: ProcessManager, process_id: str, count: int) -> list[str]:
    """Wait (with a deadline) until the process has written ``count`` lines; return them."""
    async with asyncio.timeout(20):
        while len(processes.logs(process_id)) < count:
            await asyncio.sleep(0.01)
    return [line.text for line in processes.logs(process_id)]


async def test_spawn_reads_stdout_and_stderr(processes: ProcessManager) -> None:
    info = await processes.spawn(
        PY, python("import sys\nprint('hello')\nprint('oops', file=sys.stderr)"), process_id="p"
    )
    assert info.running and info.pid > 0 and info.id == "p"
    final = await processes.wait("p", timeout=20)
    assert not final.running and final.exit_code == 0 and final.status == "exited 0"
    assert sorted(processes.logs("p")) == [("stderr", "oops"), ("stdout", "hello")]
    assert final.last_line in ("hello", "oops")
    assert final.output_lines == 2


async def test_events_arrive_in_order_per_process(processes: ProcessManager) -> None:
    subscription = processes.subscribe()
    code = "for i in range(200): print(i)"
    for name in ("a", "b", "c"):
        await processes.spawn(PY, python(code), process_id=name)
    for name in ("a", "b", "c"):
        await processes.wait(name, timeout=20)
    subscription.close()
    events = [event async for event in subscription]
    for name in ("a", "b", "c"):
        mine = [event for event in events if event.process_id == name]
        assert isinstance(mine[0], ProcessStarted)
        assert isinstance(mine[-1], ProcessExited) and mine[-1].exit_code == 0
        outputs = mine[1:-1]
        assert all(isinstance(event, ProcessOutput) for event in outputs)
        lines = [line for event in outputs for line in event.lines]  # type: ignore[union-attr]
        assert lines == [str(i) for i in range(200)]


async def test_exit_code_and_partial_last_line(processes: ProcessManager) -> None:
    code = "import sys\nsys.stdout.write('crlf\\r\\nno newline')\nsys.exit(3)"
    await processes.spawn(PY, python(code), process_id="p")
    info = await processes.wait("p", timeout=20)
    assert info.exit_code == 3 and info.status == "failed 3"
    assert [line.text for line in processes.logs("p")] == ["crlf", "no newline"]


async def test_env_cwd_and_generated_ids(processes: ProcessManager, tmp_path: Path) -> None:
    code = "import os\nprint(os.environ['VF_TEST'])\nprint(os.getcwd())"
    first = await processes.spawn(PY, python(code), cwd=tmp_path, env={"VF_TEST": "yes"})
    second = await processes.spawn(PY, python("pass"))
    assert (first.id, second.id) == ("1", "2")
    await processes.wait(first.id, timeout=20)
    assert await output_lines(processes, first.id, 2) == ["yes", str(tmp_path)]
    assert [info.id for info in processes.list_processes()] == ["1", "2"]


async def test_a_relative_program_in_a_relative_cwd(
    processes: ProcessManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `./hello` in `work`, both relative to this process's folder: run from `work`
    (tmp_path / "work").mkdir()
    script = tmp_path / "work" / "hello"
    script.write_text("#!/bin/sh\npwd\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    started = await processes.spawn("./hello", [], cwd="work")
    info = await processes.wait(started.id, timeout=20)
    assert info.exit_code == 0
    assert await output_lines(processes, started.id, 1) == [str(tmp_path / "work")]


async def test_output_buffer_is_bounded() -> None:
    async with ProcessManager(buffer_lines=100) as processes:
        await processes.spawn(PY, python("for i in range(5000): print(i)"), process_id="p")
        info = await processes.wait("p", timeout=20)
        assert info.output_lines == 5000
        assert [line.text for line in processes.logs("p")] == [str(i) for i in range(4900, 5000)]
        assert [line.text for line in processes.logs("p", limit=2)] == ["4998", "4999"]


async def test_without_captured_output_nothing_is_read(processes: ProcessManager) -> None:
    subscription = processes.subscribe()
    await processes.spawn(PY, python("print('x' * 100)"), process_id="quiet", capture_output=False)
    exited = await subscription.wait_for(ProcessExited, timeout=20)
    assert exited.process_id == "quiet" and processes.logs("quiet") == []


async def test_process_ignoring_sigterm_is_killed_after_the_timeout(
    processes: ProcessManager,
) -> None:
    code = """
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print('ready')
        time.sleep(60)
    """
    info = await processes.spawn(PY, python(code), process_id="stubborn")
    await output_lines(processes, "stubborn", 1)  # the handler is installed now
    final = await processes.kill("stubborn", timeout=0.3)
    assert final.killed and final.exit_code == -9 and final.status == "killed"
    assert not running(info.pid)


async def test_polite_process_ends_on_sigterm(processes: ProcessManager) -> None:
    await processes.spawn("sleep", ["60"], process_id="s")
    final = await processes.kill("s", timeout=10)
    assert final.exit_code == -15 and final.killed


SPAWNS_CHILDREN = """
    import signal, subprocess, sys, time
    stubborn = 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'
    children = [subprocess.Popen(['sleep', '60']),
                subprocess.Popen([sys.executable, '-c', stubborn])]
    grandchild = subprocess.Popen(['sh', '-c', 'sleep 60 & echo $!; wait'],
                                  stdout=subprocess.PIPE, text=True)
    pids = [c.pid for c in children] + [grandchild.pid, int(grandchild.stdout.readline())]
    print(' '.join(map(str, pids)), flush=True)
    time.sleep(60)
"""


async def children_of(processes: ProcessManager, process_id: str) -> list[int]:
    (line,) = await output_lines(processes, process_id, 1)
    pids = [int(pid) for pid in line.split()]
    assert len(pids) == 4 and all(running(pid) for pid in pids)
    return pids


async def test_kill_leaves_no_child_behind(processes: ProcessManager) -> None:
    info = await processes.spawn(PY, python(SPAWNS_CHILDREN), process_id="parent")
    children = await children_of(processes, "parent")
    await processes.kill("parent", timeout=0.5)
    assert not any(running(pid) for pid in [info.pid, *children])
    assert group_members(info.pid) == []


async def test_kill_all_leaves_no_child_behind(processes: ProcessManager) -> None:
    parents = [await processes.spawn(PY, python(SPAWNS_CHILDREN)) for _ in range(3)]
    children = [pid for parent in parents for pid in await children_of(processes, parent.id)]
    await processes.spawn("sleep", ["60"], process_id="plain")
    killed = await processes.kill_all(timeout=0.5)
    assert sorted(info.id for info in killed) == ["1", "2", "3", "plain"]
    assert all(info.killed and not info.running for info in killed)
    assert not any(running(pid) for pid in children + [parent.pid for parent in parents])


async def test_children_holding_the_pipes_after_their_parent_exited(
    processes: ProcessManager,
) -> None:
    # The shell exits at once; its background child keeps stdout open and runs on.
    await processes.spawn("sh", ["-c", "sleep 60 & echo $!"], process_id="p")
    info = await processes.wait("p", timeout=20)
    assert info.exit_code == 0
    (orphan,) = [int(line.text) for line in processes.logs("p")]
    assert running(orphan)
    await processes.kill_all()
    assert not running(orphan) and group_members(info.pid) == []


def start_with_pid(pid: int) -> subprocess.Popen[bytes]:
    """``sleep 60`` in a session and group of its own whose id is ``pid``, as the kernel
    does when it hands a freed number out again (``ns_last_pid``, which needs root)."""
    for _ in range(100):  # another process may fork in between: try again
        Path("/proc/sys/kernel/ns_last_pid").write_text(str(pid - 1))
        process = subprocess.Popen(["sleep", "60"], start_new_session=True)
        if process.pid == pid:
            return process
        process.kill()
        process.wait()
    raise AssertionError(f"could not start a process with pid {pid}")


async def test_a_group_that_emptied_long_ago_is_never_signalled_again(
    processes: ProcessManager,
) -> None:
    """Once a group has emptied, the kernel may give its number to another group, even
    an unrelated program's: kill_all must leave that one alone."""
    ended = await processes.spawn(PY, python("pass"), process_id="done")
    await processes.wait("done", timeout=20)
    # a group whose leader ended while a child of it runs on is still ours
    await processes.spawn("sh", ["-c", "sleep 60 & echo $!"], process_id="orphaned")
    await processes.wait("orphaned", timeout=20)
    (orphan,) = [int(line.text) for line in processes.logs("orphaned")]
    async with asyncio.timeout(20):  # the manager notices the first group emptied
        while ended.pid in processes._unsettled:
            await asyncio.sleep(0.05)
    stranger = start_with_pid(ended.pid)
    try:
        await processes.kill_all()
        assert stranger.poll() is None, "kill_all killed a group that was not its own"
        assert not running(orphan)
    finally:
        stranger.kill()
        stranger.wait()


async def test_many_spawn_kill_cycles_leave_no_zombie_or_orphan(
    processes: ProcessManager,
) -> None:
    groups = []
    for _ in range(200):
        info = await processes.spawn("sh", ["-c", "sleep 60 & sleep 60"])
        groups.append(info.pid)
        await processes.kill(info.id, timeout=2)
    # Nothing of those groups is left anywhere, not even a zombie: no orphan runs on,
    # and no killed child waits to be reaped (by us, or by an init that may not reap).
    left = [entry for entry in all_processes() if entry.pgid in set(groups)]
    assert left == []
    my_zombies = [e.pid for e in all_processes() if e.ppid == os.getpid() and e.zombie]
    assert not set(my_zombies) & set(groups)
    assert all(not info.running for info in processes.list_processes())


async def test_a_missing_command_is_a_clear_error(processes: ProcessManager) -> None:
    with pytest.raises(CommandNotFoundError, match=r"no-such-program-xyz.*not found on PATH"):
        await processes.spawn("no-such-program-xyz")
    with pytest.raises(CommandNotFoundError, match="no such file"):
        await processes.spawn("/nonexistent/bin/tool")
    assert processes.list_processes() == []


async def test_a_file_that_is_not_executable(processes: ProcessManager, tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("echo hi\n")
    with pytest.raises(CommandNotFoundError, match="not executable"):
        await processes.spawn(str(script))


async def test_bad_cwd_unknown_and_duplicate_ids(processes: ProcessManager) -> None:
    with pytest.raises(SpawnError, match="working directory"):
        await processes.spawn("sleep", ["1"], cwd="/nonexistent/folder")
    with pytest.raises(UnknownProcessError, match="no process with id 'nope'") as caught:
        processes.get("nope")
    assert isinstance(caught.value, LookupError) and isinstance(caught.value, ViewfinderError)
    await processes.spawn("sleep", ["60"], process_id="web")
    with pytest.raises(DuplicateProcessError, match="'web'"):
        await processes.spawn("sleep", ["60"], process_id="web")
    with pytest.raises(UnknownProcessError, match="known ids: web"):
        await processes.kill("nope")
    with pytest.raises(ValueError, match="without spaces"):
        await processes.spawn("sleep", ["60"], process_id="two words")


async def test_an_exited_id_can_be_reused(processes: ProcessManager) -> None:
    await processes.spawn("true", process_id="job")
    await processes.wait("job", timeout=20)
    again = await processes.spawn("sleep", ["60"], process_id="job")
    assert again.running and processes.get("job").pid == again.pid


def test_bad_manager_settings() -> None:
    with pytest.raises(ValueError, match="buffer_lines"):
        ProcessManager(buffer_lines=0)
    with pytest.raises(ValueError, match="kill_timeout"):
        ProcessManager(kill_timeout=-1)


def test_processes_outliving_their_event_loop_are_still_killed() -> None:
    # An app run with App.run() has a loop of its own; its processes must not escape.
    manager = ProcessManager(reap_orphans=True)
    info = asyncio.run(manager.spawn("sh", ["-c", "sleep 60 & sleep 60"], process_id="left"))
    assert manager.get("left").running and group_members(info.pid)
    killed = asyncio.run(manager.kill_all(timeout=2))
    assert [(i.id, i.killed, i.running, i.exit_code) for i in killed] == [
        ("left", True, False, -15)
    ]
    assert group_members(info.pid) == []


async def test_a_subscriber_that_never_reads_a_flood_stays_bounded() -> None:
    """100k lines into a subscription nobody reads: it holds at most its max, counts the rest."""
    async with ProcessManager(buffer_lines=1000) as processes:
        # ~590 KB arrives in at least 3 reads (of at most 256 KiB; a pipe holds 64 KiB),
        # so with the start and the exit there are more events than 3, however fast
        # the loop reads: some must be dropped on a loaded machine too
        slow = processes.subscribe(max_events=3)
        reader = processes.subscribe()  # one that keeps up, to know when it is over
        await processes.spawn(
            PY, python("import sys\nfor i in range(100_000): sys.stdout.write(f'{i}\\n')"),
            process_id="flood",
        )  # fmt: skip
        await reader.wait_for(ProcessExited, timeout=60)
        assert len(slow._items) <= slow.max_events  # the queue never grew past its bound
        events = slow.drain()
        assert isinstance(events[0], EventsDropped)
        delivered = sum(len(e.lines) for e in events if isinstance(e, ProcessOutput))
        assert delivered + slow.dropped_lines == 100_000  # every line is counted once
        assert events[0].lines == slow.dropped_lines > 0
        assert isinstance(events[-1], ProcessExited)  # the exit is never dropped
        assert [line.text for line in processes.logs("flood", limit=1)] == ["99999"]
