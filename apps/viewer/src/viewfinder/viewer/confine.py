"""The viewer serves only files under the PATH it was given.

A manifest, a cache file or a run folder names files by relative paths; a file that
names ``../../etc/passwd``, an absolute path, or a symlink that leads out of its folder
must get a refusal, never the file. :class:`Confined` resolves every such name: the
real path (symlinks followed) must lie inside the real path of the folder.

A name checked when an artifact is read may be swapped before its file is served (a
symlink put in its place, a folder renamed and a symlink left behind). So a file is
served only through :func:`open_confined`: opened once, walking down from the root one
component at a time with ``O_NOFOLLOW`` (``openat``, as nginx's ``disable_symlinks``),
and the open file is what is served, never the path again. A file with more than one
hard link, or on another device than the root, is refused too: a hard link is the one
way a file outside PATH can appear inside it without a symlink, and frames, videos and
captures are written with one link (copy a file into PATH rather than link it).

Every file the viewer reads goes the same way: frames and videos it serves, and the
files it reads itself (``manifest.jsonl``, ``metadata.json``, ``run.json``, a run's
texts, cache and Trajectory files) through :meth:`Confined.read`. The open does not
block (``O_NONBLOCK``): a FIFO or a device in a file's place is refused at once, never
waited on.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path, PurePosixPath

from viewfinder.viewer.errors import MissingFileError, RefusedPathError

#: The largest file the viewer reads itself (a manifest, metadata, a cache file).
MAX_READ_BYTES = 128 * 1024 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO put in a frame's place must not hang the open
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class Confined:
    """Files inside the folder ``root`` (itself resolved once, symlinks followed)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(root))

    def resolve(self, name: str) -> Path:
        """The file ``name`` (relative to the root) names; :class:`RefusedPathError` when
        it is absolute or leads outside the root, through ``..`` or a symlink."""
        if not isinstance(name, str) or not name or "\0" in name:
            raise RefusedPathError(f"refused {name!r}: not a file name")
        if name.startswith(("/", "\\")) or _DRIVE.match(name):
            raise RefusedPathError(
                f"refused {name!r}: an absolute path; files are named relative to {self.root}"
            )
        real = Path(os.path.realpath(self.root / name))
        if not real.is_relative_to(self.root):
            how = "a symlink" if ".." not in PurePosixPath(name).parts else "'..'"
            raise RefusedPathError(
                f"refused {name!r}: it leads out of {self.root} (through {how}); the "
                "viewer serves only files under the folder it was given"
            )
        return real

    def read(
        self, path: str | os.PathLike[str], limit: int = MAX_READ_BYTES, *, cut: bool = False
    ) -> bytes:
        """The bytes of the regular file ``path`` (a real path under the root, or a name
        relative to it), opened with :func:`open_confined`: never through a symlink, never
        a FIFO or device (refused at once, not waited on). A file over ``limit`` bytes is
        :class:`RefusedPathError`, or with ``cut`` its first ``limit + 1`` bytes."""
        target = Path(path)
        if not target.is_absolute():
            target = self.resolve(str(path))
        fd = open_confined(self.root, target)
        try:
            size = os.fstat(fd).st_size
            if size > limit and not cut:
                raise RefusedPathError(
                    f"refused {target.name!r}: it is {size} bytes, over the {limit} bytes "
                    "the viewer reads of one file"
                )
            chunks, left = [], limit + 1
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (symlinks followed) lies inside the root."""
        return Path(os.path.realpath(path)).is_relative_to(self.root)

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` (inside the root) as a relative posix name; ``"."`` for the root."""
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(self.root):
            raise RefusedPathError(f"refused {str(path)!r}: it is outside {self.root}")
        return real.relative_to(self.root).as_posix() or "."


def open_confined(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> int:
    """A read-only fd of the regular file ``path`` under the folder ``root`` (both real
    paths, as :meth:`Confined.resolve` gives them), opened by walking down from ``root``
    with ``O_NOFOLLOW`` at every step. :class:`RefusedPathError` when a component is now
    a symlink, the file is not a regular file, has other hard links or lies on another
    device; :class:`MissingFileError` when it is gone. The caller closes the fd."""
    root_path, file_path = Path(root), Path(path)
    if not file_path.is_relative_to(root_path) or file_path == root_path:
        raise RefusedPathError(f"refused {str(path)!r}: it is outside {root_path}")
    parts = file_path.relative_to(root_path).parts
    where = root_path.name
    try:
        folder = os.open(root_path, _FOLDER)
    except OSError as exc:
        raise _refusal(exc, str(root_path)) from None
    try:
        root_device = os.fstat(folder).st_dev
        for part in parts[:-1]:
            where = f"{where}/{part}"
            try:
                inner = os.open(part, _FOLDER, dir_fd=folder)
            except OSError as exc:
                raise _refusal(exc, where) from None
            os.close(folder)
            folder = inner
        try:
            fd = os.open(parts[-1], _FILE, dir_fd=folder)
        except OSError as exc:
            raise _refusal(exc, str(file_path)) from None
    finally:
        os.close(folder)
    try:
        _check_opened(os.fstat(fd), file_path, root_device)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_opened(found: os.stat_result, path: Path, root_device: int) -> None:
    if not stat.S_ISREG(found.st_mode):
        raise RefusedPathError(f"refused {path.name!r}: not a regular file")
    if found.st_nlink > 1:
        raise RefusedPathError(
            f"refused {path.name!r}: it has {found.st_nlink} hard links, so it may be a file "
            "from outside the folder; copy it instead of linking it"
        )
    if found.st_dev != root_device:
        raise RefusedPathError(f"refused {path.name!r}: it lies on another device than PATH")


def _refusal(exc: OSError, where: str) -> Exception:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return RefusedPathError(
            f"refused {where!r}: it is a symlink now (or not a folder); the viewer serves "
            "only the files it checked under PATH"
        )
    if exc.errno == errno.ENOENT:
        return MissingFileError(f"{Path(where).name} is missing")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return RefusedPathError(f"refused {where!r}: {exc.strerror}")
    return MissingFileError(f"{Path(where).name} cannot be opened: {exc.strerror}")
