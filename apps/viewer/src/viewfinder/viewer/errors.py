"""Errors of the viewer; all are :class:`viewfinder.core.ViewfinderError`."""

from __future__ import annotations

from viewfinder.core.errors import ViewfinderError


class ViewerError(ViewfinderError):
    """Base class of the viewer's errors."""


class ViewerSettingsError(ViewerError, ValueError):
    """Settings that cannot work (a public address without a token, ...)."""


class RefusedPathError(ViewerError, PermissionError):
    """A file an artifact names lies outside the folder the viewer was given."""


class UnknownArtifactError(ViewerError, LookupError):
    """No artifact by that name (or no step by that number) under the viewer's PATH."""


class MissingFileError(ViewerError, FileNotFoundError):
    """A file an artifact names is not there (any more)."""
