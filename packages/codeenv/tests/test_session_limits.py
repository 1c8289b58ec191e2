"""Limits of a session as a whole, in real sandboxes (root, bubblewrap): memory shared
by all its processes, one disk cap for its home and temporary folders, and no place
it can write that anyone else can see."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from viewfinder.codeenv import CodeAction, CodeEnvironment, session_cgroup

MiB = 1 << 20

FOUR_HOLDERS = """
import subprocess, sys, time
child = "import time\\nb = b'x' * (100 << 20)\\nprint('held', flush=True)\\ntime.sleep(30)"
procs = []
for _ in range(4):
    proc = subprocess.Popen([sys.executable, '-c', child], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()  # 'held', or '' once the kernel killed it
    procs.append(proc)
time.sleep(1)
alive = [proc for proc in procs if proc.poll() is None]
rss = 0
for proc in alive:
    for line in open(f'/proc/{proc.pid}/status'):
        if line.startswith('VmRSS:'):
            rss += int(line.split()[1]) * 1024
print(len(alive), rss, [proc.returncode for proc in procs])
for proc in alive:
    proc.kill()
"""

FILL = """
import errno, os
def fill(path, mib):
    try:
        with open(path, 'wb') as out:
            for _ in range(mib):
                out.write(os.urandom(1 << 20))
        return 'wrote'
    except OSError as exc:
        return errno.errorcode[exc.errno]
home = os.environ['HOME']
print(fill(os.path.join(home, 'big'), 32), os.path.getsize(os.path.join(home, 'big')))
os.remove(os.path.join(home, 'big'))
# the home and the temporary folders share the one cap
print(fill(os.path.join(home, 'part'), 6), fill('/tmp/part', 6), fill('/dev/shm/part', 6))
"""

#: Walks the sandbox's view (bounded) and lists every place it may write.
WALK = """
import json, os, stat, sys, time
found, seen, markers = [], 0, []
start = time.monotonic()
queue = ['/']
while queue and seen < 300000 and time.monotonic() - start < 90:
    folder = queue.pop(0)
    try:
        entries = list(os.scandir(folder))
    except OSError:
        continue
    for entry in entries:
        seen += 1
        if entry.path in ('/proc', '/sys') or entry.is_symlink():
            continue
        if MARKER in entry.name:
            markers.append(entry.path)
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            queue.append(entry.path)
        if (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISFIFO(mode)) and os.access(
            entry.path, os.W_OK
        ):
            found.append(entry.path)
for top in PLACES:
    with open(os.path.join(top, MARKER), 'w') as out:
        out.write('mine')
print(json.dumps({'writable': found, 'markers': markers, 'seen': seen,
                  'complete': not queue, 's': round(time.monotonic() - start, 1)}))
"""


def _peak_of(pid: int) -> int | None:
    """The memory peak of the session cgroup ``pid`` is in (v1 or v2)."""
    folders, version, _ = session_cgroup._parents()
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        name = path.rsplit("/", 1)[-1]
        if name.startswith(session_cgroup.PREFIX) and (version == 2 or "memory" in controllers):
            return session_cgroup.SessionCgroup([folders[0] / name], version).peak_memory_bytes()
    return None


def test_four_processes_share_the_sessions_memory(
    make_env: Callable[..., CodeEnvironment],
) -> None:
    assert os.geteuid() == 0, "sandbox users need root, as CI has"
    env = make_env(memory_mb=256, timeout_s=60)
    assert env.worker is not None and env.worker.pid is not None
    observation = env.step(CodeAction(code=FOUR_HOLDERS, timeout_s=60))
    assert observation.exit_code == 0, observation.stderr
    alive, rss, codes = observation.stdout.split(" ", 2)
    # each would hold 100 MiB: together no more than the session's 256 MiB
    assert int(alive) * 100 * MiB <= 256 * MiB, observation.stdout
    assert int(rss) <= 256 * MiB
    assert "-9" in codes  # the kernel ended the ones past the limit
    assert session_cgroup.probe() is None, session_cgroup.probe()
    assert env.worker.ready_info["isolation"]["session_memory_bytes"] == 256 * MiB
    peak = _peak_of(env.worker.pid)
    assert peak is not None and peak <= 256 * MiB
    print(f"memory_mb=256: {alive} of 4 holders alive, RSS {int(rss) / MiB:.0f} MiB, "
          f"session peak {peak / MiB:.0f} MiB")  # fmt: skip


def test_the_home_and_tmp_share_one_disk_cap(make_env: Callable[..., CodeEnvironment]) -> None:
    env = make_env(tmp_size_mb=16)
    assert env.worker is not None and env.worker.home is not None
    space = env.worker.home.parent
    observation = env.step(CodeAction(code=FILL, timeout_s=60))
    assert observation.exit_code == 0, observation.stderr
    first, second = observation.stdout.splitlines()
    verdict, written = first.split()
    assert verdict == "ENOSPC" and int(written) <= 16 * MiB, first
    assert second.split()[-1] == "ENOSPC" and second.split()[0] == "wrote", second
    print(f"tmp_size_mb=16: ENOSPC after {int(written) / MiB:.1f} MiB in HOME")
    env.close()
    # nothing of it is left: not the files, not the tmpfs
    assert not space.exists()
    assert str(space) not in Path("/proc/self/mountinfo").read_text()


def _walk(env: CodeEnvironment, marker: str, places: list[str]) -> dict[str, object]:
    code = f"MARKER = {marker!r}\nPLACES = {places!r}\n" + WALK
    observation = env.step(CodeAction(code=code, timeout_s=150))
    assert observation.exit_code == 0, observation.stderr
    result: dict[str, object] = json.loads(observation.stdout.strip().splitlines()[-1])
    return result


def _under(path: str, places: list[str]) -> bool:
    return any(path == place or path.startswith(place + "/") for place in places)


def test_a_session_can_write_only_its_own_places(
    make_env: Callable[..., CodeEnvironment],
) -> None:
    a, b = make_env(timeout_s=150), make_env(timeout_s=150)
    assert a.worker is not None and b.worker is not None
    homes = {str(a.worker.home), str(b.worker.home)}
    places_a = [str(a.worker.home), "/tmp", "/var/tmp", "/dev/shm"]
    places_b = [str(b.worker.home), "/tmp", "/var/tmp", "/dev/shm"]

    seen_a = _walk(a, "marker-of-a", places_a)
    seen_b = _walk(b, "marker-of-a", places_b)

    for seen, places in ((seen_a, places_a), (seen_b, places_b)):
        shared = [path for path in seen["writable"] if not _under(path, places)]  # type: ignore[attr-defined]
        assert shared == [], shared
        assert {path for path in seen["writable"] if path in homes} <= set(places)  # type: ignore[attr-defined]
    # what a left in each of its places, b does not see anywhere it walked
    assert seen_b["markers"] == [], seen_b["markers"]
    print(f"walked {seen_a['seen']} entries in {seen_a['s']} s (complete: {seen_a['complete']})")
