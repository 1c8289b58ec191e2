"""Folders that commands write their results to."""

from __future__ import annotations

import os
from pathlib import Path

from viewfinder.core.errors import OutputPathError


def output_folder(path: str | os.PathLike[str]) -> Path:
    """Make ``path`` (and its parents) ready to be written to, and return it.

    Call it before doing the work whose results go there, so that a folder that cannot
    be made (``/proc/x``, ``/dev/null/x``) or written to is an
    :class:`~viewfinder.core.errors.OutputPathError` naming it, not a lost result.
    """
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(folder, exc.strerror or str(exc)) from exc
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(folder, "permission denied")
    return folder
