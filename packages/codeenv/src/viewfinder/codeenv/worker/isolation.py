"""Sessions walled off from each other with bubblewrap (Linux, the server run as root).

Each worker is started inside ``bwrap`` (:func:`command`), in a PID, mount and (by
default) network namespace of its own:

- **Files**: the machine's file system is read-only, whatever its modes say
  (``/run/lock``, a file left 0666), so nothing writable is shared with anyone.
  ``/tmp``, ``/dev/shm`` and ``/var/tmp`` are the session's own: folders of its space
  (:mod:`viewfinder.codeenv.session_space`: one tmpfs with the session's home, capped as
  a whole), so a session sees none of another's files there and cannot fill the disk
  the others share. Only what the session needs is bound back in: its home (writable),
  the socket of its own X display, and the parts of the Python installation that lived
  there. ``/dev`` holds only null, zero, full, random, urandom, tty and a pty instance of
  its own; SysV shared memory, semaphores and POSIX message queues are its own (an IPC
  namespace).
- **Screen**: with only its own display's socket in ``/tmp/.X11-unix`` and no network
  (abstract X sockets belong to the network namespace), a session cannot even reach
  another's display, which would refuse its user id anyway (:mod:`viewfinder.xvfb.access`).
- **Processes**: a PID namespace with its own ``/proc``: the session sees its own
  processes only, not another session's command lines, nor the server's; and every
  process of it ends with the worker (the namespace's init ends them).
- **Network**: a network namespace with nothing but its own loopback; ``network="host"``
  keeps the machine's.
- **Reading the interpreter**: where Python lives under a folder only root may enter
  (``/root``), that folder is replaced, for this worker, by an empty one holding just
  the installation, so the session needs no capability to read it (and so can read no
  one else's files).

bubblewrap (Debian's ``bubblewrap``, installed by ``make setup``) does the namespaces
and mounts; this module only says which. The worker then confines itself
(:mod:`.confinement`): limits, and the switch to the session's user id.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

#: The folders every process may write to; private to the session once isolated.
SHARED_TOPS = ("/tmp", "/dev/shm", "/var/tmp")
#: The bubblewrap program.
BWRAP = "bwrap"
INSTALL_HINT = "install bubblewrap (`apt-get install bubblewrap`, or `make setup`)"


class IsolationError(OSError):
    """Sessions cannot be isolated here: no bubblewrap, or a kernel that refuses."""


def command(plan: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The ``bwrap ... --`` words that start a worker isolated as ``plan`` says
    (``keep``: paths to bind writable, ``display_socket``, ``tops``: the folder that
    stands for each of /tmp, /var/tmp, /dev/shm, or else ``tmp_bytes``: the size of a
    tmpfs for each, ``network``: ``"none"`` or ``"host"``), and the report of what
    they do.

    Raises :class:`IsolationError` when bubblewrap is not installed.
    """
    binary = shutil.which(BWRAP)
    if binary is None:
        raise IsolationError(f"bubblewrap is not installed: {INSTALL_HINT}")
    network = plan.get("network", "none")
    size = int(plan.get("tmp_bytes", 512 * 1024 * 1024))
    keep = [os.path.realpath(path) for path in plan.get("keep", []) if os.path.lexists(path)]
    # the home is writable, even where it is also on sys.path (the worker's folder)
    needed = [path for path in _interpreter_paths() if path not in keep]
    masks = _blocking_folders(needed)
    # the machine's files read-only (nothing there is writable, whatever its mode:
    # /run/lock, a 0666 file); a /dev of the few devices a program needs, with a pty
    # namespace of its own; SysV IPC and POSIX message queues of its own
    words = [
        binary,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-ipc",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    if network == "none":
        words.append("--unshare-net")
    tops: dict[str, str] = plan.get("tops") or {}
    for top in SHARED_TOPS:
        if top in tops:  # a folder of the session's space (session_space.py)
            words += ["--bind", str(tops[top]), top]
        elif os.path.isdir(top):
            words += ["--perms", "1777", "--size", str(size), "--tmpfs", top]
    for mask in masks:
        words += ["--perms", "0755", "--tmpfs", mask]
        for child in _children(mask, needed):
            words += ["--ro-bind", child, child]
    hidden = [path for path in needed if _under(path, SHARED_TOPS)]
    # one bind for a folder and what is in it (a venv and its site-packages)
    hidden = [path for path in hidden if not any(_inside(path, other) for other in hidden)]
    writable = sorted({*SHARED_TOPS, *keep})
    socket_path = plan.get("display_socket")
    if socket_path and os.path.exists(socket_path):
        keep.append(socket_path)
    # bwrap makes the folders on the way to a bind for root alone: made here first, so
    # the session (another user) can go through them
    made = sorted({above for path in [*hidden, *keep] for above in _folders_below_top(path)})
    for folder in made:
        words += ["--perms", "0755", "--dir", folder]
    words += [arg for path in hidden for arg in ("--ro-bind", path, path)]
    for path in keep:
        words += ["--bind", path, path]
    report = {
        "via": "bubblewrap",
        "private_tmp_bytes": size,
        "writable": writable,
        "processes_hidden": True,
        "network": network,
        "masked": masks,
        "interpreter_reachable": reachable_after([*masks, *made], needed),
    }
    return [*words, "--"], report


@functools.cache
def probe(timeout: float = 10.0) -> dict[str, Any]:
    """Which protections this machine allows, tried once with ``bwrap ... true`` (and
    remembered: the answer does not change while the process runs):
    ``{"available": bool, "missing": [...], "reason": str | None}``."""
    everything = ["files", "processes", "network"]
    if not sys.platform.startswith("linux"):
        return {"available": False, "missing": everything,
                "reason": "session isolation needs Linux namespaces"}  # fmt: skip
    if os.geteuid() != 0:
        return {"available": False, "missing": everything,
                "reason": "session isolation needs the server to run as root "
                "(it gives each session a user id and namespaces of its own)"}  # fmt: skip
    try:
        words, _ = command({"tmp_bytes": 1024 * 1024})
        done = subprocess.run(
            [*words, "true"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (IsolationError, OSError, subprocess.TimeoutExpired) as exc:
        return {"available": False, "missing": everything, "reason": str(exc)}
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "it failed"
        return {"available": False, "missing": everything, "reason": f"bwrap: {reason}"}
    return {"available": True, "missing": [], "reason": None}


@functools.cache
def _interpreter_paths() -> list[str]:
    """The folders the worker and the code's imports read: the installation, its
    packages, viewfinder itself."""
    import viewfinder.codeenv

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    paths.add(str(Path(viewfinder.codeenv.__file__).resolve().parents[2]))
    paths.update(entry for entry in sys.path if entry and os.path.isdir(entry))
    return sorted(os.path.realpath(path) for path in paths if os.path.isdir(path))


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` is strictly inside ``folder``."""
    return path.startswith(folder + "/")


def _folders_below_top(path: str) -> list[str]:
    """The folders between the private top that ``path`` is under and ``path`` itself."""
    top = next((top for top in SHARED_TOPS if _under(path, (top,))), None)
    folders = []
    folder = os.path.dirname(path)
    while top is not None and _inside(folder, top):
        folders.append(folder)
        folder = os.path.dirname(folder)
    return folders


def _under(path: str, tops: tuple[str, ...]) -> bool:
    return any(path == top or path.startswith(top + "/") for top in tops)


def _on_the_way(path: str) -> list[tuple[str, bool]]:
    """The folders from ``/`` down to ``path`` (itself included), each with whether
    others may enter it (False too for one that cannot be looked at)."""
    parts = Path(path).parts
    found = []
    for depth in range(1, len(parts)):
        folder = str(Path(*parts[: depth + 1]))
        try:
            enterable = bool(os.stat(folder).st_mode & stat.S_IXOTH)
        except OSError:
            enterable = False
        found.append((folder, enterable))
    return found


def _blocking_folders(paths: list[str]) -> list[str]:
    """The first folder on the way to each of ``paths`` (not the path itself) that
    others may not enter, outermost first. Paths under the private tops are bound back
    whole and need nothing."""
    found: list[str] = []
    for path in paths:
        if _under(path, SHARED_TOPS):
            continue
        blocked = [folder for folder, enterable in _on_the_way(path)[:-1] if not enterable]
        if blocked and blocked[0] not in found:
            found.append(blocked[0])
    return sorted(found, key=lambda folder: folder.count("/"))


def reachable_after(replaced: list[str], paths: list[str]) -> bool:
    """Whether, with the folders ``replaced`` by ones others may enter (masks, and the
    folders made on the way to a bind), every folder on the way to ``paths`` and each
    path itself may be entered by others: then no capability is needed to read them.
    An installation in a folder of its owner alone (a venv made 0700) is not."""
    return all(
        enterable or folder in replaced for path in paths for folder, enterable in _on_the_way(path)
    )


def _children(mask: str, paths: list[str]) -> list[str]:
    """The entries of ``mask`` that lead to ``paths``."""
    children = set()
    for path in paths:
        if path.startswith(mask + "/"):
            children.add(mask + "/" + path[len(mask) + 1 :].split("/", 1)[0])
    return sorted(children)
