"""Names of viewfinder.server, imported on first use (see __init__.py)."""

from .app import create_app
from .client import AsyncCodingEnv, CodingEnv
from .desktop_task import DesktopTask
from .errors import (
    CapacityReachedError,
    DockerUnavailableError,
    EnvServerError,
    InsecureBindError,
    ServerConnectionError,
    ServerError,
    SessionLostError,
    TaskRejectedError,
)
from .local import LocalServer
from .pool import EnvError, EnvPool
from .settings import TOKEN_ENV, ServerSettings

__all__ = [
    "TOKEN_ENV",
    "AsyncCodingEnv",
    "CapacityReachedError",
    "CodingEnv",
    "DesktopTask",
    "DockerUnavailableError",
    "EnvError",
    "EnvPool",
    "EnvServerError",
    "InsecureBindError",
    "LocalServer",
    "ServerConnectionError",
    "ServerError",
    "ServerSettings",
    "SessionLostError",
    "TaskRejectedError",
    "create_app",
]
