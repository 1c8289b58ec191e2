"""viewfinder.server: the code env over OpenEnv's wire protocol, and its clients.

>>> from viewfinder.server import CodingEnv, create_app, ServerSettings
>>> app = create_app(ServerSettings(max_sessions=8))     # serve with uvicorn
>>> with CodingEnv.local() as env:                       # doctest: +SKIP
...     env.reset()
...     env.step("import tkinter; tkinter.Tk(); capture_screenshot()").observation.screenshot
"""

from viewfinder.server.app import create_app
from viewfinder.server.client import AsyncCodingEnv, CodingEnv
from viewfinder.server.errors import (
    CapacityReachedError,
    DockerUnavailableError,
    EnvServerError,
    InsecureBindError,
    ServerConnectionError,
    ServerError,
)
from viewfinder.server.local import LocalServer
from viewfinder.server.settings import TOKEN_ENV, ServerSettings

__all__ = [
    "TOKEN_ENV",
    "AsyncCodingEnv",
    "CapacityReachedError",
    "CodingEnv",
    "DockerUnavailableError",
    "EnvServerError",
    "InsecureBindError",
    "LocalServer",
    "ServerConnectionError",
    "ServerError",
    "ServerSettings",
    "create_app",
]
