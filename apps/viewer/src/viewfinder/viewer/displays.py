"""Which X displays the live view may show.

Only displays the user pointed the viewer at: those given with ``--live``, those of
``viewfinder display start`` (the display registry), and those named by the artifacts
being shown (a desktop run's or a recording's display) while they run. Any other
display on the machine is refused, whatever a page asks for.
"""

from __future__ import annotations

import threading
from pathlib import Path

from viewfinder.xvfb.registry import list_displays, parse_display_number

SOCKET_DIR = Path("/tmp/.X11-unix")


def display_alive(name: str) -> bool:
    """Whether local display ``name`` (``":N"``) has its socket, i.e. a server runs it."""
    try:
        number = parse_display_number(name)
    except ValueError:
        return False
    return (SOCKET_DIR / f"X{number}").exists()


def normalise(name: str) -> str:
    """``"3"``, ``":3"``, ``":3.0"`` -> ``":3"``; ``ValueError`` for anything else."""
    return f":{parse_display_number(name)}"


class LiveDisplays:
    """The displays the live view may show (see the module docstring)."""

    def __init__(self, given: tuple[str, ...]) -> None:
        self.given = tuple(normalise(name) for name in given)
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def saw(self, name: str) -> None:
        """An artifact shown names ``name``: allow it while it runs."""
        try:
            shown = normalise(name)
        except ValueError:
            return
        with self._lock:
            self._seen.add(shown)

    def available(self) -> list[dict[str, object]]:
        """Every allowed display that runs now, with where it comes from."""
        found: dict[str, str] = {}
        for name in self.given:
            found.setdefault(name, "--live")
        for record in list_displays(prune=False):
            if record.is_alive():
                found.setdefault(record.name, "viewfinder display")
        with self._lock:
            for name in sorted(self._seen):
                found.setdefault(name, "artifact")
        return [
            {"name": name, "source": source, "alive": display_alive(name)}
            for name, source in found.items()
        ]

    def allowed(self, name: str) -> str | None:
        """``name`` normalised when the live view may show it, else None."""
        try:
            shown = normalise(name)
        except ValueError:
            return None
        if shown in self.given:
            return shown
        with self._lock:
            if shown in self._seen:
                return shown
        if any(record.name == shown and record.is_alive() for record in list_displays(prune=False)):
            return shown
        return None
