"""The worker walls itself off from other sessions before it runs any code (Linux, root).

Run as root, before the switch to the session's user (:mod:`.confinement`), in a mount
namespace and (by default) a network namespace of the worker's own:

- **Files**: ``/tmp`` is a private tmpfs with a size limit, and ``/dev/shm`` and
  ``/var/tmp`` are folders of it, so a session sees none of another's files there and
  cannot fill the disk the others share. Only what the session needs is bound back in:
  its home, the socket of its own X display, and the parts of the Python installation
  that lived there.
- **Screen**: with only its own display's socket in ``/tmp/.X11-unix`` and no network
  (abstract X sockets belong to the network namespace), a session cannot connect to
  another's display.
- **Processes**: ``/proc`` is mounted again with ``hidepid=invisible``: the session
  sees its own processes only (each session has a user id of its own), not another
  session's command lines, nor the server's.
- **Network**: a network namespace with nothing but its own loopback; ``network="host"``
  keeps the machine's.
- **Reading the interpreter**: where Python lives under a folder only root may enter
  (``/root``), that folder is replaced, for this worker, by an empty one holding just
  the installation, so the session needs no capability to read it (and so can read no
  one else's files).

Standard library only: this runs before the code, at every worker start.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import socket
import stat
import struct
import sys
from pathlib import Path
from typing import Any

_CLONE_NEWNS = 0x00020000
_CLONE_NEWNET = 0x40000000
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_RDONLY = 1
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_O_PATH = getattr(os, "O_PATH", 0o10000000)

#: The folders every process may write to; private to the session once isolated.
SHARED_TOPS = ("/tmp", "/dev/shm", "/var/tmp")


class _Mounter:
    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.mount.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_char_p,
        ]

    def mount(
        self, source: str | None, target: str, kind: str | None, flags: int, data: str | None
    ) -> None:
        result = self.libc.mount(
            source.encode() if source is not None else None,
            target.encode(),
            kind.encode() if kind is not None else None,
            flags,
            data.encode() if data is not None else None,
        )
        if result != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"mount {target}: {os.strerror(errno)}")

    def unshare(self, flags: int) -> None:
        if self.libc.unshare(flags) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"unshare: {os.strerror(errno)}")


def isolate(plan: dict[str, Any]) -> dict[str, Any]:
    """Apply ``plan`` (``keep``: paths to leave visible, ``display_socket``,
    ``tmp_bytes``, ``network``: ``"none"`` or ``"host"``); return what was done.

    Raises ``OSError`` when the kernel refuses (no privileges, no namespaces).
    """
    mounter = _Mounter()
    network = plan.get("network", "none")
    mounter.unshare(_CLONE_NEWNS | (_CLONE_NEWNET if network == "none" else 0))
    mounter.mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    keep = [os.path.realpath(path) for path in plan.get("keep", []) if os.path.lexists(path)]
    # the home is writable, even where it is also on sys.path (the worker's folder)
    needed = [path for path in _interpreter_paths() if path not in keep]
    socket_path = plan.get("display_socket")
    if socket_path and os.path.exists(socket_path):
        keep.append(socket_path)
    keep += [path for path in needed if _under(path, SHARED_TOPS)]
    masks = _blocking_folders(needed)
    # Everything to bind back is opened before anything is covered.
    reopen: dict[str, int] = {}
    for path in [*keep, *(child for mask in masks for child in _children(mask, needed))]:
        if path not in reopen:
            reopen[path] = os.open(path, _O_PATH | os.O_CLOEXEC)
    try:
        size = int(plan.get("tmp_bytes", 512 * 1024 * 1024))
        mounter.mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={size},mode=1777")
        for top in SHARED_TOPS[1:]:
            if os.path.isdir(top):
                inside = f"/tmp/.{top.strip('/').replace('/', '-')}"
                os.mkdir(inside)
                os.chmod(inside, 0o1777)
                mounter.mount(inside, top, None, _MS_BIND, None)
        for mask in masks:
            mounter.mount("tmpfs", mask, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
            for child in _children(mask, needed):
                _bind(mounter, reopen[child], child, read_only=True)
        for path in keep:
            _bind(mounter, reopen[path], path, read_only=path in needed)
    finally:
        for fd in reopen.values():
            os.close(fd)
    hidden = _remount_proc(mounter)
    if network == "none":
        _loopback_up()
    return {
        "private_tmp_bytes": size,
        "processes_hidden": hidden,
        "network": network,
        "masked": masks,
        "interpreter_reachable": reachable_after(masks, needed),
    }


def _bind(mounter: _Mounter, fd: int, path: str, *, read_only: bool) -> None:
    """Make ``path`` (in the new, empty tree) show what ``fd`` pointed at before."""
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.makedirs(path, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    mounter.mount(f"/proc/self/fd/{fd}", path, None, _MS_BIND | _MS_REC, None)
    if read_only:
        mounter.mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None)


def _remount_proc(mounter: _Mounter) -> bool:
    for option in ("hidepid=invisible", "hidepid=2"):
        try:
            mounter.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, option)
        except OSError:
            continue
        return True
    return False


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def _interpreter_paths() -> list[str]:
    """The folders the worker and the code's imports read: the installation, its
    packages, viewfinder itself."""
    import viewfinder.codeenv

    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    paths.add(str(Path(viewfinder.codeenv.__file__).resolve().parents[2]))
    paths.update(entry for entry in sys.path if entry and os.path.isdir(entry))
    return sorted(os.path.realpath(path) for path in paths if os.path.isdir(path))


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


def reachable_after(masks: list[str], paths: list[str]) -> bool:
    """Whether, with ``masks`` replaced, every folder on the way to ``paths`` (and each
    path itself) may be entered by others: then no capability is needed to read them."""
    return all(
        enterable or folder in masks
        for path in paths
        if not _under(path, SHARED_TOPS)
        for folder, enterable in _on_the_way(path)
    )


def _children(mask: str, paths: list[str]) -> list[str]:
    """The entries of ``mask`` that lead to ``paths``."""
    children = set()
    for path in paths:
        if path.startswith(mask + "/"):
            children.add(mask + "/" + path[len(mask) + 1 :].split("/", 1)[0])
    return sorted(children)


def probe() -> dict[str, Any]:
    """Which protections this machine allows, tried in a child process that exits at
    once: ``{"available": bool, "missing": [...], "reason": str | None}``."""
    if not sys.platform.startswith("linux"):
        return {"available": False, "missing": ["files", "processes", "network"],
                "reason": "session isolation needs Linux namespaces"}  # fmt: skip
    if os.geteuid() != 0:
        return {"available": False, "missing": ["files", "processes", "network"],
                "reason": "session isolation needs the server to run as root "
                "(it gives each session a user id and namespaces of its own)"}  # fmt: skip
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: try it all, say how far it got
        os.close(read_fd)
        answer: dict[str, Any] = {"missing": [], "reason": None}
        try:
            mounter = _Mounter()
            mounter.unshare(_CLONE_NEWNS | _CLONE_NEWNET)
            mounter.mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
            mounter.mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m")
            if not _remount_proc(mounter):
                answer["missing"].append("processes")
                answer["reason"] = "/proc cannot be mounted with hidepid"
        except OSError as exc:
            answer = {"missing": ["files", "processes", "network"], "reason": str(exc)}
        os.write(write_fd, json.dumps(answer).encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    try:
        answer = json.loads(data)
    except ValueError:
        answer = {"missing": ["files", "processes", "network"], "reason": "the probe failed"}
    answer["available"] = not answer["missing"]
    return answer
