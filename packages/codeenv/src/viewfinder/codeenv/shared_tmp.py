"""What a session leaves in the machine-wide temporary folders goes with it.

A session's code has its own home (also its ``TMPDIR``), but nothing stops it writing to
``/tmp`` or ``/dev/shm`` directly. Each session runs as a user id of its own (see
:mod:`viewfinder.codeenv.sandbox_users`) with umask 077, so what it writes there is its
own and private; when the session's id is given back, everything in those folders that
the id owns is removed, so the next session to get the id finds none of it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

#: The folders every process may write to, whatever its home.
SHARED_FOLDERS = (Path("/tmp"), Path("/dev/shm"), Path("/var/tmp"))


def remove_owned_by(
    uid: int, folders: tuple[Path, ...] = SHARED_FOLDERS, keep: tuple[Path, ...] = ()
) -> list[Path]:
    """Remove every entry under ``folders`` owned by ``uid``; return what was removed.

    ``keep``: paths to leave (an episode's home, which outlives its worker).
    Only where ``uid`` could write is searched: the folders themselves and the
    world-writable folders in them (``/tmp/.X11-unix``...); symbolic links are removed,
    never followed.
    """
    if uid == 0:
        raise ValueError("refusing to remove root's files")
    removed: list[Path] = []
    kept = {os.path.realpath(path) for path in keep}
    for top in folders:
        removed += _remove_in(top, uid, kept)
    return removed


def _remove_in(folder: Path, uid: int, kept: set[str]) -> list[Path]:
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:  # missing or unreadable
        return removed
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        owner = info.st_uid
        path = Path(entry.path)
        if os.path.realpath(path) in kept:
            continue
        if owner == uid:
            with contextlib.suppress(OSError):
                if is_dir:
                    shutil.rmtree(path)
                else:
                    path.unlink()
                removed.append(path)
        elif is_dir and info.st_mode & 0o002:  # another's folder that anyone may write to
            removed += _remove_in(path, uid, kept)
    return removed
