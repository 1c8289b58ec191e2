"""Where ``!shot`` gets its screenshot from, and where it puts the file."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

from viewfinder.core import CaptureBackend, Screenshot

#: ``capture(source)`` → a screenshot; ``source`` is "auto", "display" or "browser".
ShotTaker = Callable[[str], Awaitable[Screenshot]]


def backend_shot_taker(backend: CaptureBackend) -> ShotTaker:
    """Shots from any capture backend (the ``source`` asked for is ignored)."""

    async def take(source: str) -> Screenshot:
        return await backend.acapture(context={"origin": "tui"})

    return take


def save_shot(screenshot: Screenshot, directory: Path, when: datetime) -> Path:
    """Save ``screenshot`` as ``shot-<time>-<source>[-N].<ext>`` in ``directory``; never
    overwrites an earlier shot."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"shot-{when:%Y%m%d-%H%M%S}-{screenshot.source}"
    path = directory / f"{stem}.{screenshot.extension}"
    number = 1
    while path.exists():
        number += 1
        path = directory / f"{stem}-{number}.{screenshot.extension}"
    return screenshot.save(path)
