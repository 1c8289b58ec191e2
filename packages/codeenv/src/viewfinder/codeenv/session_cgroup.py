"""Memory and process count for a session as a whole: a cgroup of its own.

``RLIMIT_DATA`` bounds each process; a session that starts four processes could hold
four times ``memory_mb``. A control group bounds them together: the session's worker is
started in a cgroup of its own, made under the server's, with ``memory_mb`` as its memory
limit (past it the kernel's OOM killer ends a process of the session, and none of anyone
else's) and ``max_processes`` as its process limit. Everything the worker starts stays
in it: a process cannot leave a cgroup without write access to another, which a
session's user has nowhere.

Both hierarchies are handled: cgroup v2 (one tree, where the server's cgroup must have
``memory`` and ``pids`` enabled for its children, or let us enable them) and cgroup v1
(a ``memory`` and a ``pids`` tree, each mounted read-write). Where neither lets the
server make a child (not root, a read-only ``/sys/fs/cgroup``, controllers held by a
parent), :func:`probe` says why and a session gets only the per-process limits.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import sys
import time
from pathlib import Path

#: The prefix of every session cgroup's name (abandoned ones are found by it).
PREFIX = "viewfinder-session-"
#: Run before a command: moves itself into each ``cgroup.procs`` named before ``--``,
#: then becomes the rest (so the command and all it starts are in the cgroups).
_ENTER = """\
import os, sys
end = sys.argv.index("--")
for procs in sys.argv[1:end]:
    with open(procs, "w") as file:
        file.write(str(os.getpid()))
os.execvp(sys.argv[end + 1], sys.argv[end + 1:])
"""


class SessionCgroup:
    """The cgroup (v2) or cgroups (v1: memory and pids) of one session."""

    def __init__(self, folders: list[Path], version: int) -> None:
        self.folders = folders
        self.version = version

    def prefix(self) -> list[str]:
        """The words before a command that start it inside this cgroup."""
        procs = [str(folder / "cgroup.procs") for folder in self.folders]
        return [sys.executable, "-I", "-S", "-c", _ENTER, *procs, "--"]

    def peak_memory_bytes(self) -> int | None:
        """The most memory the session's processes held together so far."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                return int((folder / name).read_text())
        return None

    def pids(self) -> list[int]:
        """The processes in the cgroup now."""
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(line) for line in (folder / "cgroup.procs").read_text().split())
        return sorted(found)

    def remove(self, wait_s: float = 5.0) -> bool:
        """Kill what is left in it and remove it; False when it could not be removed."""
        deadline = time.monotonic() + wait_s
        removed = True
        for folder in self.folders:
            while folder.exists():
                for pid in self.pids():
                    with contextlib.suppress(OSError):
                        os.kill(pid, 9)
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        removed = False
                        break
                    time.sleep(0.05)
        return removed

    def __repr__(self) -> str:
        return f"<SessionCgroup v{self.version} {', '.join(map(str, self.folders))}>"


def create(memory_bytes: int, max_processes: int) -> SessionCgroup | None:
    """A new cgroup limited to ``memory_bytes`` and ``max_processes`` together, or None
    where the host does not let the server make one (:func:`probe` says why)."""
    parents, version, _ = _parents()
    if not parents:
        return None
    name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
    made: list[Path] = []
    try:
        for parent in parents:
            _sweep(parent)
            folder = parent / name
            folder.mkdir(mode=0o755)
            made.append(folder)
        _limit(made, version, memory_bytes, max_processes)
    except OSError:
        SessionCgroup(made, version).remove()
        return None
    return SessionCgroup(made, version)


def probe() -> str | None:
    """None where session cgroups can be made here, else why not (one line)."""
    return _parents()[2]


@functools.cache
def _parents() -> tuple[list[Path], int, str | None]:
    """The folders session cgroups go under (one for v2; memory's and pids' for v1),
    the version, and why there are none."""
    if os.geteuid() != 0:
        return [], 0, "session cgroups need the server to run as root"
    mounts = _cgroup_mounts()
    own = _own_cgroups()
    if "" in mounts and "" in own:
        folder = _folder(mounts[""], own[""])
        problem = _enable_v2(folder)
        if problem is None:
            return [folder], 2, None
        v2_problem = problem
    else:
        v2_problem = "no cgroup v2 hierarchy holds the server"
    folders = []
    for controller in ("memory", "pids"):
        if controller not in mounts or controller not in own:
            return [], 0, f"{v2_problem}, and no cgroup v1 {controller} hierarchy is mounted"
        folder = _folder(mounts[controller], own[controller])
        if not os.access(folder, os.W_OK):
            return [], 0, f"{v2_problem}, and the cgroup v1 {controller} folder is read-only"
        folders.append(folder)
    return folders, 1, None


def _cgroup_mounts() -> dict[str, tuple[Path, str]]:
    """Where each hierarchy is mounted ("" for v2, the controller's name for v1), and
    which of its cgroups the mount shows at its top."""
    found: dict[str, tuple[Path, str]] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) < 5 or len(tail) < 3:
                continue
            kind, options = tail[0], tail[2].split(",")
            if kind == "cgroup2":
                found.setdefault("", (Path(fields[4]), fields[3]))
            elif kind == "cgroup":
                for controller in ("memory", "pids"):
                    if controller in options:
                        found.setdefault(controller, (Path(fields[4]), fields[3]))
    return found


def _folder(mount: tuple[Path, str], cgroup: str) -> Path:
    """The folder of ``cgroup`` under a hierarchy's ``mount`` (its point and top)."""
    point, top = mount
    if top != "/" and (cgroup == top or cgroup.startswith(top + "/")):
        cgroup = cgroup[len(top) :]
    return point / cgroup.lstrip("/")


def _own_cgroups() -> dict[str, str]:
    """The server's cgroup in each hierarchy ("" for v2)."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                found[controller] = path
    return found


def _enable_v2(folder: Path) -> str | None:
    """Make ``memory`` and ``pids`` available to ``folder``'s children; None, or why not."""
    try:
        available = (folder / "cgroup.controllers").read_text().split()
        missing = [name for name in ("memory", "pids") if name not in available]
        if missing:
            return f"the server's cgroup v2 offers no {' or '.join(missing)} controller"
        enabled = (folder / "cgroup.subtree_control").read_text().split()
        wanted = [f"+{name}" for name in ("memory", "pids") if name not in enabled]
        if wanted:
            (folder / "cgroup.subtree_control").write_text(" ".join(wanted))
    except OSError as exc:
        # EBUSY: the server's cgroup holds processes, so it may have no controlled
        # children (cgroup v2's rule); run the server in a cgroup of its own
        return f"the server's cgroup v2 {folder} does not let it make one: {exc.strerror}"
    return None


def _limit(folders: list[Path], version: int, memory_bytes: int, max_processes: int) -> None:
    if version == 2:
        (folders[0] / "memory.max").write_text(str(memory_bytes))
        with contextlib.suppress(OSError):  # no swap accounting: nothing to cap
            (folders[0] / "memory.swap.max").write_text("0")
        (folders[0] / "pids.max").write_text(str(max_processes))
        return
    memory, pids = folders
    (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
    with contextlib.suppress(OSError):  # memory and swap together, where accounted
        (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
    (pids / "pids.max").write_text(str(max_processes))


def _sweep(parent: Path) -> None:
    """Remove the empty session cgroups of servers that are gone."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            name = entry.name
            if not name.startswith(PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            pid = name[len(PREFIX) :].split("-", 1)[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)
