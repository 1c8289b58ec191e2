"""Errors of the server and its clients."""

from __future__ import annotations

from viewfinder.core.errors import ViewfinderError
from viewfinder.core.providers import SessionLostError

__all__ = [
    "CapacityReachedError",
    "DockerUnavailableError",
    "EnvServerError",
    "InsecureBindError",
    "IsolationUnavailableError",
    "ServerConnectionError",
    "ServerError",
    "SessionLostError",
    "TaskRejectedError",
]


class ServerError(ViewfinderError):
    """Base class of the server's and the clients' own errors."""


class InsecureBindError(ServerError, ValueError):
    """The server was asked to listen beyond this machine without a token."""


class CapacityReachedError(ServerError):
    """Every session slot is taken: the server's ``max_sessions``, or the display slots
    of its provider (a Ray cluster's free slots); ``message`` says which."""

    code = "CAPACITY_REACHED"

    def __init__(self, active: int, maximum: int, *, message: str | None = None) -> None:
        self.active_sessions = active
        self.max_sessions = maximum
        super().__init__(
            message
            or f"the server runs {active} sessions, its maximum ({maximum}); close a session "
            "or start the server with a larger --max-sessions"
        )


class EnvServerError(ServerError):
    """The server answered a client's message with an ``error`` message.

    ``code`` is OpenEnv's error code (``CAPACITY_REACHED``, ``VALIDATION_ERROR``,
    ``INVALID_JSON``, ``UNKNOWN_TYPE``, ``EXECUTION_ERROR``, ...); ``data`` the whole payload.
    """

    def __init__(self, data: dict[str, object]) -> None:
        self.data = data
        self.code = str(data.get("code", "UNKNOWN"))
        super().__init__(f"the server answered with an error ({self.code}): {data.get('message')}")


class ServerConnectionError(ServerError, ConnectionError):
    """The client could not reach the server, or lost its connection."""


class DockerUnavailableError(ServerError):
    """``from_docker_image`` needs a running Docker engine and there is none."""


class IsolationUnavailableError(ServerError):
    """The server was asked to require session isolation that this machine refuses."""


class TaskRejectedError(ServerError, ValueError):
    """A desktop reset asked for what this server does not do (an app it does not start)."""
