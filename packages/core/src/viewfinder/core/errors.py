"""Errors a user of viewfinder can meet.

Every error says what was wrong and what to do about it. They all derive from
:class:`ViewfinderError`, so a caller can catch the whole family at once, and most also
derive from the built-in exception a Python programmer would expect (``LookupError``
for an unknown name, ``ValueError`` for bad input, ...).
"""

from __future__ import annotations

from collections.abc import Iterable


class ViewfinderError(Exception):
    """Base class of every error viewfinder raises on purpose."""


class UnknownBackendError(ViewfinderError, LookupError):
    """A capture backend was asked for by a name no plugin registered."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        self.name = name
        self.available = sorted(available)
        listed = ", ".join(self.available) or "none"
        super().__init__(
            f"unknown capture backend {name!r}; registered backends: {listed}. "
            "Run `viewfinder backends` to see which are usable here."
        )


class BackendUnavailableError(ViewfinderError):
    """A backend exists but cannot capture on this machine right now."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"capture backend {name!r} is not available: {reason}")


class NoBackendAvailableError(ViewfinderError):
    """No registered backend can capture here."""


class DependencyMissingError(ViewfinderError):
    """A program viewfinder runs (Xvfb, Chromium, ...) is not installed."""

    def __init__(self, program: str, hint: str) -> None:
        self.program = program
        self.hint = hint
        super().__init__(f"{program} is not installed or not on PATH. {hint}")


class RegionError(ViewfinderError, ValueError):
    """A capture region is malformed or does not lie on the screen."""


class WindowNotFoundError(ViewfinderError, LookupError):
    """A window id does not name a window on the display."""


class CaptureNotSupportedError(ViewfinderError):
    """The backend cannot do what was asked (a window capture on a page, ...)."""


class CaptureError(ViewfinderError):
    """A capture failed for a reason outside the caller's input."""


class DisplayGoneError(CaptureError):
    """The display a backend captures from is no longer running."""


class ActionError(ViewfinderError):
    """An input action (click, type, ...) could not be performed."""


class ScreenshotDecodeError(ViewfinderError, ValueError):
    """Screenshot JSON, base64 or image bytes could not be decoded."""


class PluginError(ViewfinderError):
    """A plugin failed to load or implements a hook that does not exist."""


class EventFormatError(ViewfinderError, ValueError):
    """An action in another format (computer-use input, manifest line) cannot be read."""


class BackendOptionError(ViewfinderError, TypeError):
    """A capture backend (or another ``kind`` of plugin factory, an element source)
    was given an option it does not take."""

    def __init__(
        self,
        name: str,
        unknown: Iterable[str],
        accepted: Iterable[str],
        kind: str = "capture backend",
    ) -> None:
        self.name = name
        self.unknown = sorted(unknown)
        self.accepted = sorted(accepted)
        super().__init__(
            f"{kind} {name!r} takes no option {', '.join(map(repr, self.unknown))}; "
            f"its options are: {', '.join(self.accepted) or '(none)'}"
        )


class OutputPathError(ViewfinderError, OSError):
    """A file or folder could not be written where the user asked."""

    def __init__(self, path: object, reason: str) -> None:
        self.path = path
        super().__init__(
            f"cannot write {path}: {reason}; choose a folder you can write to (or create it)"
        )
