"""Errors the cache package raises on purpose.

Every error says what was wrong and what to do. A problem inside a cache file names the
file, the step index (when it is about one step) and the field, so it can be fixed by
hand: ``cache.json: step 3: trajectory[3].visual_representation: ...``.
"""

from __future__ import annotations

import os
from pathlib import Path

from viewfinder.core.errors import RegionError, ViewfinderError


class CacheError(ViewfinderError):
    """Base class of the cache package's errors."""


class CacheFileError(CacheError, ValueError):
    """A cache file (or a source to build one from) cannot be read or is inconsistent.

    ``path`` is the file (None for an in-memory model), ``step`` the index of the step
    in the trajectory the problem is in (None when it is about the whole file) and
    ``field`` the dotted path of the offending field (``metadata.visual_validation.method``).
    """

    def __init__(
        self,
        problem: str,
        *,
        path: str | os.PathLike[str] | None = None,
        step: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.step = step
        self.field = field
        self.problem = problem
        super().__init__(self._describe())

    def _describe(self) -> str:
        where = [str(self.path) if self.path is not None else "cache file"]
        if self.step is not None:
            where.append(f"step {self.step}")
        if self.field:
            where.append(self.field)
        return ": ".join([*where, self.problem])

    def at(self, path: str | os.PathLike[str] | None) -> CacheFileError:
        """The same error, naming ``path`` as the file (used once the file is known)."""
        if self.path is not None or path is None:
            return self
        return type(self)(self.problem, path=path, step=self.step, field=self.field)


class StepCoordinateError(CacheFileError, RegionError):
    """A step acts at a coordinate that is not on the screen it is recorded or replayed on."""


class HashSettingsError(CacheError, ValueError):
    """A hash method, hash size or region size that cannot be used."""


class MissingParameterError(CacheError, LookupError):
    """Replay was asked without a value for a ``{{parameter}}`` the trajectory uses."""

    def __init__(self, missing: list[str], declared: dict[str, str]) -> None:
        self.missing = missing
        self.declared = declared
        described = ", ".join(
            f"{name} ({declared[name]})" if declared.get(name) else name for name in missing
        )
        super().__init__(
            f"no value given for the parameter(s) {described}; pass each as "
            "NAME=VALUE (`-p NAME=VALUE` on the command line, `parameters=` in Python)"
        )


class SourceError(CacheError, ValueError):
    """A source to build a cache from (message history, trajectory, session) is unusable."""
