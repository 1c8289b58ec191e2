"""Errors of the code env. Failures of the executed code are never raised: they are
reported in the observation (exit code, stderr). These are failures of the env itself."""

from __future__ import annotations

from viewfinder.core.errors import ViewfinderError


class CodeEnvError(ViewfinderError):
    """Base class of the code env's own errors."""


class WorkerStartError(CodeEnvError):
    """A worker subprocess did not start or did not get ready."""


class SandboxError(CodeEnvError):
    """The sandbox around a worker could not be set up (user ids, directories)."""


class EnvironmentClosedError(CodeEnvError):
    """The environment was closed; create a new one."""


class ScriptFileError(CodeEnvError, ValueError):
    """A file given to ``viewfinder exec`` cannot be run as Python source (not UTF-8)."""
