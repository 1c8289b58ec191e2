"""The viewer serves only files under the PATH it was given.

A manifest, a cache file or a run folder names files by relative paths; a file that
names ``../../etc/passwd``, an absolute path, or a symlink that leads out of its folder
must get a refusal, never the file. :class:`Confined` resolves every such name: the
real path (symlinks followed) must lie inside the real path of the folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from viewfinder.viewer.errors import RefusedPathError

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


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

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (symlinks followed) lies inside the root."""
        return Path(os.path.realpath(path)).is_relative_to(self.root)

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` (inside the root) as a relative posix name; ``"."`` for the root."""
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(self.root):
            raise RefusedPathError(f"refused {str(path)!r}: it is outside {self.root}")
        return real.relative_to(self.root).as_posix() or "."
